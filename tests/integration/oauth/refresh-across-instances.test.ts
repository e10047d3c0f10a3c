// A token refresh for one account asked of two instances at the same moment (// docs/decisions/053): two separate processes of the app on one PostgreSQL database, each asking
// several times at once. The IdP's token endpoint sees one refresh grant, both get the same token,
// and the grant stays alive (a rotating IdP revokes it when a refresh token is used twice).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { introspectToken } from "../../../app/auth/oauth/tokens.server.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { runSideBySide } from "../../support/instance-process.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";

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

describe.runIf(dbLabel === "postgres")(`one refresh across instances (${dbLabel})`, () => {
  test("two processes, five callers each, an expired token: one refresh grant, one token for all, the grant still alive", async () => {
    await signInThroughIdp(new CookieJar(), ALICE);
    const account = await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } });
    await testDb().account.update({ where: { id: account.id }, data: { expiresAt: Math.floor(Date.now() / 1000) - 10 } });
    refreshGrants = 0;

    // Both start their calls at the same moment, once both have loaded (tests/support/instance-process.ts).
    const [a, b] = await runSideBySide<string[]>("tests/support/refresh-instance.ts", { USER_ID: account.userId, CALLS: "5" }, "tokens");
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
