// `npm run conformance` against the production server (`node server/main.ts`, as npm start runs
// it) with the provider on: the MCP conformance suite's server scenarios reach /mcp through the
// command's token-adding forwarder, and every result is the one conformance-baseline.yml expects
// (docs/features/mcp.md#conformance, ADR 144). No network: the suite and its scenarios are local.
import { execFile, spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort, startApp, type RunningApp } from "../support/browser";
import { answerConsent, follow, signedInBrowser } from "../support/provider-flow";
import { runNpm, type CliResult } from "../support/cli";
import { seedUser } from "../support/seed-user";

let app: RunningApp;

/**
 * `npm run conformance` as an operator runs it, waited for however long it takes: thirty
 * scenarios, each a client of its own, outlast runNpm's one-minute bound on a loaded machine.
 */
function runConformance(env: Record<string, string | undefined>, args: string[] = []): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile("npm", ["run", "conformance", ...(args.length ? ["--", ...args] : [])], { env: operatorEnv(env), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** An operator's shell: none of the test run's own settings, then `env`. */
function operatorEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const shell: Record<string, string | undefined> = { ...process.env };
  for (const key of Object.keys(shell)) {
    if (key.startsWith("AUTH_") || key.startsWith("VITEST") || ["DATABASE_URL", "VESTIBULE_DATA_DIR", "NODE_ENV", "TEST", "VESTIBULE_TEST_DB"].includes(key)) delete shell[key];
  }
  return { ...shell, VESTIBULE_LOG: "silent", VESTIBULE_ENV_FILE: "/dev/null", ...env };
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

it("--authorization: the suite's authorization-server scenarios pass — the metadata, and a code grant with PKCE that a person signs in to and allows", async () => {
  const email = "conformance-as@example.com";
  const password = "a-long-enough-password-123";
  await seedUser(app, { email, password });
  const port = await freePort();
  const env = { VESTIBULE_DATA_DIR: app.dataDir, AUTH_SECRET: app.env.AUTH_SECRET, AUTH_URL: app.env.AUTH_URL, AUTH_PROVIDER: "true" };
  const child = spawn("npm", ["run", "conformance", "--", "--authorization", "--port", String(port)], { env: operatorEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? -1)));
  // The suite prints the authorization URL for a person to open, then waits for its callback.
  const authorizationUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const found = new RegExp(`^(${app.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/oauth/authorize\\?\\S+)$`, "m").exec(stdout);
      if (found) resolve(found[1]!);
    });
    void exited.then((code) => reject(new Error(`the suite ended (${code}) before asking for an authorization:\n${stdout}\n${stderr}`)));
  });
  // The person: signed in to Vestibule, opens it, allows the app (registered by the command: "unverified").
  const server = { url: app.url, stop: async () => {} };
  const jar = await signedInBrowser(server, email, password);
  let step = await follow(server, jar, authorizationUrl);
  if (step.status === 200) step = await answerConsent(server, jar, step, "allow");
  expect(step.url.origin, step.html?.slice(0, 500)).toBe(`http://127.0.0.1:${port}`);
  expect(step.url.searchParams.get("iss")).toBe(app.url);
  // The browser arrives at the suite's callback; the suite redeems the code itself.
  await (await fetch(step.url)).arrayBuffer();
  const code = await exited;
  const output = `${stdout.slice(-3_000)}\n--- stderr ---\n${stderr.slice(-3_000)}`;
  expect(stdout, output).toMatch(/authorization-server-metadata-endpoint[\s\S]*?passed/);
  expect(code, output).toBe(0);
  // The run's client is gone again.
  const clients = await runNpm("oauth:client:list", [], env);
  expect(clients.stdout).not.toContain("MCP conformance suite");
});

it("refuses to run with the provider off", async () => {
  const result = await runNpm("conformance", [], { VESTIBULE_DATA_DIR: app.dataDir, AUTH_SECRET: app.env.AUTH_SECRET, AUTH_URL: app.env.AUTH_URL });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("the OAuth provider is off");
});
