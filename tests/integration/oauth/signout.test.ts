// Sign-out and slow providers: the provider work at sign-out (token revocations, the federated
// sign-out URL) runs side by side under one bound (the OAuth time budget, lowered here to 1 s), so
// a slow or stalled provider never keeps the visitor waiting longer than that. Revocations that
// finish inside the bound are made; a stalled one leaves its account's tokens as they were. The
// provider is the hostile IdP, whose /revoke answers after as long as the token says.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { loadConfig, resetConfig } from "../../../app/auth/core/config.server.ts";
import { sealToken } from "../../../app/auth/oauth/tokens.server.ts";
import { clearOAuthCaches } from "../../../app/auth/oauth/http.server.ts";
import * as signoutRoute from "../../../app/routes/auth/signout.tsx";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, ORIGIN, post } from "../../support/http.ts";
import { HOSTILE_CLIENT, startHostileIdp, type HostileIdp } from "../../support/hostile-idp.ts";
import { sessionOf } from "../../support/oauth-flow.ts";

/** The OAuth time budget for these tests: one call's limit, and sign-out's bound for all of them. */
// Wide enough that a loaded machine's own work around the calls stays inside it; the delays below
// are set against it so that calls made one after another would overrun it.
const BOUND_MS = 3_000;

let hostile: HostileIdp;

function configure(env: Record<string, string> = {}) {
  process.env.AUTH_OIDC_ISSUER = hostile.issuer;
  process.env.AUTH_OIDC_ID = HOSTILE_CLIENT.clientId;
  process.env.AUTH_OIDC_SECRET = HOSTILE_CLIENT.clientSecret;
  process.env.AUTH_OIDC_FEDERATED_SIGNOUT = env.AUTH_OIDC_FEDERATED_SIGNOUT ?? "false";
  clearOAuthCaches();
  resetConfig({ ...loadConfig(), oauthTimeoutMs: BOUND_MS });
}

beforeAll(async () => {
  hostile = await startHostileIdp();
});
afterAll(async () => {
  await hostile?.stop();
  delete process.env.AUTH_OIDC_FEDERATED_SIGNOUT;
  resetConfig();
});
beforeEach(async () => {
  hostile.reset("ok");
  configure();
  await resetDatabase();
});

/** A signed-in user with one linked account at the provider per refresh token given. */
async function userWithAccounts(refreshTokens: string[]) {
  const user = await createUser();
  const { jar } = await signIn();
  for (const [i, token] of refreshTokens.entries()) {
    const providerAccountId = `hostile-sub-${i}`;
    const at = (field: "refreshToken" | "idToken") => ({ provider: "oidc", providerAccountId, field });
    await testDb().account.create({
      data: {
        userId: user.id,
        type: "oidc",
        provider: "oidc",
        providerAccountId,
        refreshToken: await sealToken(token, at("refreshToken")),
        idToken: await sealToken(`id-token-${i}`, at("idToken")),
      },
    });
  }
  return { user, jar };
}

async function signOut(jar: CookieJar) {
  const csrfToken = await fetchCsrf(jar);
  const started = Date.now();
  const res = await callRoute(signoutRoute.action, post("/auth/signout", { csrfToken, callbackUrl: "/bye" }, { jar }));
  const ms = Date.now() - started;
  jar.apply(res);
  return { res, ms };
}

/** Which of the user's accounts still hold a refresh token, by providerAccountId. */
async function accountsWithTokens(userId: string) {
  const rows = await testDb().account.findMany({ where: { userId, refreshToken: { not: null } }, orderBy: { providerAccountId: "asc" } });
  return rows.map((r) => r.providerAccountId);
}

describe(`sign-out with slow providers (${dbLabel})`, () => {
  test("two slow revocations run side by side: both are made, in about the time of one", async () => {
    const { user, jar } = await userWithAccounts(["revoke-after-1800", "revoke-after-1801"]);
    const { res, ms } = await signOut(jar);
    expect(res).toHaveRedirect(`${ORIGIN}/bye`);
    // One after the other they would take 3.6 s, beyond the bound, and the second would be lost.
    expect(ms).toBeLessThan(BOUND_MS);
    expect(hostile.revoked.sort()).toEqual(["revoke-after-1800", "revoke-after-1801"]);
    expect(await accountsWithTokens(user.id)).toEqual([]);
    expect(await sessionOf(jar)).toBeNull();
  });

  test("a provider that never answers cannot hold sign-out beyond the bound; the revocation that finishes is made", async () => {
    const { user, jar } = await userWithAccounts(["revoke-after-2000", "revoke-never"]);
    const { res, ms } = await signOut(jar);
    expect(res).toHaveRedirect(`${ORIGIN}/bye`);
    // In turn it would be 2 s, then the stalled call's own full budget: 5 s.
    expect(ms).toBeGreaterThanOrEqual(BOUND_MS - 50);
    expect(ms).toBeLessThan(BOUND_MS + 1_500);
    expect(hostile.revoked).toEqual(["revoke-after-2000"]);
    // The stalled revocation was not confirmed: that account keeps its tokens.
    expect(await accountsWithTokens(user.id)).toEqual(["hostile-sub-1"]);
    expect(await sessionOf(jar)).toBeNull();
    const events = await testDb().authEvent.findMany({ where: { userId: user.id, type: "signout" } });
    expect(events).toHaveLength(1);
  });

  test("discovery slower than the bound (federated sign-out on): sign-out answers within the bound, to the callback URL", async () => {
    configure({ AUTH_OIDC_FEDERATED_SIGNOUT: "true" });
    hostile.reset("slow-discovery");
    const slowMs = hostile.slowMs;
    hostile.slowMs = BOUND_MS + 1_500;
    const { user, jar } = await userWithAccounts(["revoke-at-once"]);
    const { res, ms } = await signOut(jar).finally(() => (hostile.slowMs = slowMs));
    // Federated sign-out and revocation each need discovery: in turn, two budgets (6 s).
    expect(ms).toBeLessThan(BOUND_MS + 1_500);
    expect(res).toHaveRedirect(`${ORIGIN}/bye`);
    expect(await sessionOf(jar)).toBeNull();
    expect(hostile.revoked).toEqual([]);
    expect(await accountsWithTokens(user.id)).toEqual(["hostile-sub-0"]);
    // The ID token is kept too: no end-session URL was used.
    expect((await testDb().account.findFirstOrThrow({ where: { userId: user.id } })).idToken).not.toBeNull();
  });

  test("control: a provider that answers at once gets the federated sign-out and the revocation", async () => {
    configure({ AUTH_OIDC_FEDERATED_SIGNOUT: "true" });
    const { user, jar } = await userWithAccounts(["revoke-at-once"]);
    const { res } = await signOut(jar);
    // The hostile IdP has no end_session_endpoint: sign-out goes to the callback URL.
    expect(res).toHaveRedirect(`${ORIGIN}/bye`);
    expect(hostile.revoked).toEqual(["revoke-at-once"]);
    expect(await accountsWithTokens(user.id)).toEqual([]);
  });
});
