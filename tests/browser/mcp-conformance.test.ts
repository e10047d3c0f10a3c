// `npm run conformance` against the production server (`node server/main.ts`, as npm start runs
// it) with the provider on: the MCP conformance suite's server scenarios reach /mcp through the
// command's token-adding forwarder, and every result is the one conformance-baseline.yml expects
// (docs/features/mcp.md#conformance, ADR 144). No network: the suite and its scenarios are local.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/browser";
import { runNpm } from "../support/cli";

let app: RunningApp;

beforeAll(async () => {
  app = await startApp({ AUTH_PROVIDER: "true" });
});

afterAll(async () => {
  await app?.stop();
});

it("passes the scenarios the example passes and fails only those the baseline lists", async () => {
  const env = { VESTIBULE_DATA_DIR: app.dataDir, AUTH_SECRET: app.env.AUTH_SECRET, AUTH_URL: app.env.AUTH_URL, AUTH_PROVIDER: "true" };
  const result = await runNpm("conformance", [], env);
  expect(result.stdout, result.stderr).toContain("✓ server-initialize: 1 passed, 0 failed");
  expect(result.stdout).toContain("✓ tools-list: 1 passed, 0 failed");
  expect(result.stdout).toContain("Baseline check passed");
  expect(result.code, result.stderr).toBe(0);
});

it("refuses to run with the provider off", async () => {
  const result = await runNpm("conformance", [], { VESTIBULE_DATA_DIR: app.dataDir, AUTH_SECRET: app.env.AUTH_SECRET, AUTH_URL: app.env.AUTH_URL });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("the OAuth provider is off");
});
