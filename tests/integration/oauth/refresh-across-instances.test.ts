// A token refresh for one account asked of two instances at the same moment (contract §12,
// docs/decisions/053): two separate processes of the app on one PostgreSQL database, each asking
// several times at once. The IdP's token endpoint sees one refresh grant, both get the same token,
// and the grant stays alive (a rotating IdP revokes it when a refresh token is used twice).
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { introspectToken } from "../../../app/auth/oauth/tokens.server.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
let idp: TestIdp;
let refreshGrants = 0;

beforeAll(async () => {
  idp = await startTestIdp();
  idp.configure();
  idp.provider.on("grant.success", (ctx) => {
    if (ctx.oidc.params.grant_type === "refresh_token") refreshGrants++;
  });
});
afterAll(() => idp?.stop());

function instance(env: Record<string, string>): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "tests/support/refresh-instance.ts")], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith('{"tokens"'));
      if (code !== 0 || !line) reject(new Error(`instance exited ${code}: ${err}${out}`));
      else resolve((JSON.parse(line) as { tokens: string[] }).tokens);
    });
  });
}

describe.runIf(dbLabel === "postgres")(`one refresh across instances (${dbLabel})`, () => {
  test("two processes, five callers each, an expired token: one refresh grant, one token for all, the grant still alive", async () => {
    await signInThroughIdp(new CookieJar(), ALICE);
    const account = await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } });
    await testDb().account.update({ where: { id: account.id }, data: { expiresAt: Math.floor(Date.now() / 1000) - 10 } });
    refreshGrants = 0;

    // Both start their calls at the same moment, well after both have loaded.
    const env = { USER_ID: account.userId, START_AT: String(Date.now() + 6_000), CALLS: "5" };
    const [a, b] = await Promise.all([instance(env), instance(env)]);
    const tokens = [...a, ...b];
    expect(tokens).toHaveLength(10);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).toBeTruthy();
    expect(refreshGrants).toBe(1);
    expect((await introspectToken("oidc", tokens[0]!)).active).toBe(true);
    const row = await testDb().account.findUniqueOrThrow({ where: { id: account.id } });
    expect(row.expiresAt).toBeGreaterThan(Date.now() / 1000 + 60);
  });
});
