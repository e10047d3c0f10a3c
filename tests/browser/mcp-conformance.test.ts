// `npm run conformance` against the production server (`node server/main.ts`, as npm start runs
// it) with the provider on: the MCP conformance suite's server scenarios reach /mcp through the
// command's token-adding forwarder, and every result is the one conformance-baseline.yml expects
// (docs/features/mcp.md#conformance, ADR 144). No network: the suite and its scenarios are local.
import { execFile } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/browser";
import { runNpm, type CliResult } from "../support/cli";
import { seedUser } from "../support/seed-user";

let app: RunningApp;

/**
 * `npm run conformance` as an operator runs it, waited for however long it takes: thirty
 * scenarios, each a client of its own, outlast runNpm's one-minute bound on a loaded machine.
 */
function runConformance(env: Record<string, string | undefined>, args: string[] = []): Promise<CliResult> {
  const shell: Record<string, string | undefined> = { ...process.env };
  for (const key of Object.keys(shell)) {
    if (key.startsWith("AUTH_") || key.startsWith("VITEST") || ["DATABASE_URL", "VESTIBULE_DATA_DIR", "NODE_ENV", "TEST", "VESTIBULE_TEST_DB"].includes(key)) delete shell[key];
  }
  return new Promise((resolve) => {
    execFile("npm", ["run", "conformance", ...(args.length ? ["--", ...args] : [])], { env: { ...shell, VESTIBULE_LOG: "silent", VESTIBULE_ENV_FILE: "/dev/null", ...env }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  app = await startApp({ AUTH_PROVIDER: "true" });
});

afterAll(async () => {
  await app?.stop();
});

it("passes the scenarios the example passes and fails only those the baseline lists", async () => {
  const env = { VESTIBULE_DATA_DIR: app.dataDir, AUTH_SECRET: app.env.AUTH_SECRET, AUTH_URL: app.env.AUTH_URL, AUTH_PROVIDER: "true" };
  const result = await runConformance(env);
  const output = `${result.stdout.slice(-3_000)}\n--- stderr ---\n${result.stderr.slice(-3_000)}`;
  expect(result.stdout, output).toContain("✓ server-initialize: 1 passed, 0 failed");
  expect(result.stdout).toContain("✓ tools-list: 1 passed, 0 failed");
  expect(result.stdout).toContain("Baseline check passed");
  expect(result.code, output).toBe(0);
});

it("with --email the token is that user's, allowed for the run: the scenario passes (refused as revoked before)", async () => {
  await seedUser(app, { email: "conformance-user@example.com", password: "a-long-enough-password-123" });
  const env = { VESTIBULE_DATA_DIR: app.dataDir, AUTH_SECRET: app.env.AUTH_SECRET, AUTH_URL: app.env.AUTH_URL, AUTH_PROVIDER: "true" };
  const result = await runConformance(env, ["--email", "conformance-user@example.com", "--scenario", "tools-call-simple-text"]);
  const output = `${result.stdout.slice(-3_000)}\n--- stderr ---\n${result.stderr.slice(-3_000)}`;
  expect(result.stdout, output).toContain("Passed: 1/1, 0 failed");
  expect(result.code, output).toBe(0);
});

it("refuses to run with the provider off", async () => {
  const result = await runNpm("conformance", [], { VESTIBULE_DATA_DIR: app.dataDir, AUTH_SECRET: app.env.AUTH_SECRET, AUTH_URL: app.env.AUTH_URL });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("the OAuth provider is off");
});
