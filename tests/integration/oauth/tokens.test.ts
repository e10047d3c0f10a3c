// Provider tokens after sign-in, against the real IdP: getAccessToken() with refresh, rotation and
// single-flight; revocation at sign-out (RFC 7009) checked with introspection (RFC 7662);
// federated sign-out (RP-initiated logout) when the provider opts in.
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { getAccessToken, introspectToken, openToken } from "../../../app/auth/oauth/tokens.server.ts";
import * as signoutRoute from "../../../app/routes/auth/signout.tsx";
import { withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { TEST_AUTH_SECRET } from "../../support/env.ts";
import { callRoute, CookieJar, fetchCsrf, ORIGIN, post } from "../../support/http.ts";
import { ALICE, startTestIdp, TEST_CLIENT, type TestIdp } from "../../support/idp.ts";
import { authorizationUrlOf, sessionOf, signInThroughIdp, startSignIn } from "../../support/oauth-flow.ts";

let idp: TestIdp;
let refreshGrants = 0;

beforeAll(async () => {
  idp = await startTestIdp();
  idp.provider.on("grant.success", (ctx) => {
    if (ctx.oidc.params.grant_type === "refresh_token") refreshGrants++;
  });
});
afterAll(() => idp?.stop());
beforeEach(async () => {
  idp.configure({ AUTH_OIDC_FEDERATED_SIGNOUT: "false" });
  refreshGrants = 0;
  await resetDatabase();
});

async function signedInAlice(idpJar = new CookieJar()) {
  const jar = new CookieJar();
  await signInThroughIdp(jar, ALICE, { idpJar });
  const account = await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } });
  const at = (field: "accessToken" | "refreshToken" | "idToken") => ({ provider: "oidc", providerAccountId: ALICE.sub, field });
  return {
    jar,
    idpJar,
    account,
    userId: account.userId,
    accessToken: (await openToken(account.accessToken, at("accessToken")))!,
    refreshToken: (await openToken(account.refreshToken, at("refreshToken")))!,
    read: async () => {
      const row = await testDb().account.findUniqueOrThrow({ where: { id: account.id } });
      return { row, accessToken: await openToken(row.accessToken, at("accessToken")), refreshToken: await openToken(row.refreshToken, at("refreshToken")) };
    },
  };
}

async function expireAccessToken(accountId: string) {
  await testDb().account.update({ where: { id: accountId }, data: { expiresAt: Math.floor(Date.now() / 1000) - 10 } });
}

/** A refresh grant made directly against the IdP (what a replayed, stolen refresh token would do). */
async function refreshDirectly(refreshToken: string) {
  const issuer = new URL(idp.issuer);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
  const client = { client_id: TEST_CLIENT.clientId };
  const response = await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretBasic(TEST_CLIENT.clientSecret), refreshToken, { [oauth.allowInsecureRequests]: true });
  return oauth.processRefreshTokenResponse(as, client, response).then(
    () => "accepted",
    (e: unknown) => (e instanceof oauth.ResponseBodyError ? e.error : String(e)),
  );
}

async function signOut(jar: CookieJar, callbackUrl = "/") {
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(signoutRoute.action, post("/auth/signout", { csrfToken, callbackUrl }, { jar }));
  jar.apply(res);
  return res;
}

describe(`provider tokens (${dbLabel})`, () => {
  test("after AUTH_SECRET is rotated, a refresh token sealed with the old value still refreshes, and what is stored then opens with the new value alone", async () => {
    const alice = await signedInAlice();
    await expireAccessToken(alice.account.id);
    const NEW = "the-new-secret-after-rotation-0123456789abc";
    const undo = withEnv({ AUTH_SECRET: `${NEW},${TEST_AUTH_SECRET}` });
    try {
      const fresh = await getAccessToken(alice.userId, "oidc");
      expect(fresh).toBeTruthy();
      expect(refreshGrants).toBe(1);
      const row = await testDb().account.findUniqueOrThrow({ where: { id: alice.account.id } });
      const at = (field: "accessToken" | "refreshToken") => ({ provider: "oidc", providerAccountId: ALICE.sub, field });
      expect(await openToken(row.accessToken, at("accessToken"), [NEW])).toBe(fresh);
      expect(await openToken(row.refreshToken, at("refreshToken"), [NEW])).toBeTruthy();
    } finally {
      undo();
    }
  });

  test("a fresh access token is returned as stored, and the IdP says it is active", async () => {
    const alice = await signedInAlice();
    expect(await getAccessToken(alice.userId, "oidc")).toBe(alice.accessToken);
    expect(refreshGrants).toBe(0);
    const info = await introspectToken("oidc", alice.accessToken);
    expect(info).toMatchObject({ active: true, sub: ALICE.sub, client_id: TEST_CLIENT.clientId });
  });

  test("an expired access token is refreshed; the refresh token rotates and the old one is dead at the IdP", async () => {
    const alice = await signedInAlice();
    await expireAccessToken(alice.account.id);
    const fresh = await getAccessToken(alice.userId, "oidc");
    expect(fresh).toBeTruthy();
    expect(fresh).not.toBe(alice.accessToken);
    expect(refreshGrants).toBe(1);

    const after = await alice.read();
    expect(after.accessToken).toBe(fresh);
    expect(after.refreshToken).toBeTruthy();
    expect(after.refreshToken).not.toBe(alice.refreshToken);
    expect(after.row.expiresAt).toBeGreaterThan(Date.now() / 1000 + 60);
    expect((await introspectToken("oidc", fresh!)).active).toBe(true);
    expect((await introspectToken("oidc", alice.refreshToken, "refresh_token")).active).toBe(false);
    // Stored, so the next call makes no request.
    expect(await getAccessToken(alice.userId, "oidc")).toBe(fresh);
    expect(refreshGrants).toBe(1);
  });

  test("single-flight: ten concurrent callers share one refresh", async () => {
    const alice = await signedInAlice();
    await expireAccessToken(alice.account.id);
    const tokens = await Promise.all(Array.from({ length: 10 }, () => getAccessToken(alice.userId, "oidc")));
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).toBeTruthy();
    expect(refreshGrants).toBe(1);
    // Had two refreshes raced, the IdP would have seen the rotated refresh token reused and
    // revoked the grant; the token is still good.
    expect((await introspectToken("oidc", tokens[0]!)).active).toBe(true);
  });

  test("a refresh token the IdP refuses (invalid_grant) is forgotten and the caller gets null", async () => {
    const alice = await signedInAlice();
    expect(await refreshDirectly(alice.refreshToken)).toBe("accepted");
    // The IdP rotated it behind Vestibule's back: the stored one is now a reused token.
    await expireAccessToken(alice.account.id);
    expect(await getAccessToken(alice.userId, "oidc")).toBeNull();
    const after = await alice.read();
    expect(after.row.refreshToken).toBeNull();
    expect(after.row.accessToken).toBeNull();
    expect(await getAccessToken(alice.userId, "oidc")).toBeNull();
  });

  test("no account at that provider → null", async () => {
    const alice = await signedInAlice();
    expect(await getAccessToken(alice.userId, "github")).toBeNull();
    expect(await getAccessToken("no-such-user", "oidc")).toBeNull();
  });

  test("sign-out revokes the refresh token at the IdP (RFC 7009) and forgets the stored tokens", async () => {
    const alice = await signedInAlice();
    expect((await introspectToken("oidc", alice.refreshToken, "refresh_token")).active).toBe(true);
    const res = await signOut(alice.jar, "/bye");
    expect(res).toHaveRedirect(`${ORIGIN}/bye`);
    expect(await sessionOf(alice.jar)).toBeNull();
    expect((await introspectToken("oidc", alice.refreshToken, "refresh_token")).active).toBe(false);
    expect(await refreshDirectly(alice.refreshToken)).toBe("invalid_grant");
    const after = await alice.read();
    expect(after.row).toMatchObject({ accessToken: null, refreshToken: null, expiresAt: null });
    expect(await getAccessToken(alice.userId, "oidc")).toBeNull();
  });

  test("sign-out still completes when the IdP cannot be reached for revocation", async () => {
    const alice = await signedInAlice();
    await idp.stop();
    try {
      const res = await signOut(alice.jar);
      expect(res).toHaveRedirect(`${ORIGIN}/`);
      expect(await sessionOf(alice.jar)).toBeNull();
    } finally {
      idp = await startTestIdp({ port: idp.port });
      idp.provider.on("grant.success", (ctx) => {
        if (ctx.oidc.params.grant_type === "refresh_token") refreshGrants++;
      });
    }
  });

  test("federated sign-out is off by default: sign-out goes to the callback URL", async () => {
    const alice = await signedInAlice();
    expect(getConfig().oidc?.federatedSignOut).toBe(false);
    expect(await signOut(alice.jar, "/")).toHaveRedirect(`${ORIGIN}/`);
  });

  test("federated sign-out (opt-in): the browser goes to the IdP's end_session_endpoint and the IdP session ends", async () => {
    idp.configure({ AUTH_OIDC_FEDERATED_SIGNOUT: "true" });
    const idpJar = new CookieJar();
    const alice = await signedInAlice(idpJar);
    expect(await idpAsksToSignIn(idpJar)).toBe(false);

    const res = await signOut(alice.jar, "/");
    const location = new URL(res.headers.get("Location")!);
    expect(location.origin + location.pathname).toBe(`${idp.issuer}/session/end`);
    expect(location.searchParams.get("client_id")).toBe(TEST_CLIENT.clientId);
    expect(location.searchParams.get("post_logout_redirect_uri")).toBe(`${ORIGIN}/`);
    expect(location.searchParams.get("id_token_hint")).toMatch(/^eyJ/);
    expect(await sessionOf(alice.jar)).toBeNull();
    expect((await alice.read()).row.idToken).toBeNull();

    // The IdP asks for confirmation, then sends the browser back to the app.
    const confirm = await fetch(location, { headers: { Cookie: idpJar.header() }, redirect: "manual" });
    idpJar.apply(confirm);
    const html = await confirm.text();
    const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"/.exec(html)?.[1] ?? /<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(html)?.[1];
    expect(action).toBeTruthy();
    const fields = new URLSearchParams([...html.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    fields.set("logout", "yes");
    const done = await fetch(new URL(action!, idp.issuer), {
      method: "POST",
      headers: { Cookie: idpJar.header(), "Content-Type": "application/x-www-form-urlencoded" },
      body: fields,
      redirect: "manual",
    });
    idpJar.apply(done);
    expect(done.status).toBe(303);
    expect(done.headers.get("Location")).toBe(`${ORIGIN}/`);
    // The IdP session is gone: the next sign-in asks for credentials again.
    expect(await idpAsksToSignIn(idpJar)).toBe(true);
  });
});

/** Starts a sign-in and reports whether the IdP shows its login form to this browser. */
async function idpAsksToSignIn(idpJar: CookieJar): Promise<boolean> {
  let url = await authorizationUrlOf(await startSignIn(new CookieJar()));
  for (let hop = 0; hop < 6; hop++) {
    const res = await fetch(url, { headers: { Cookie: idpJar.header() }, redirect: "manual" });
    idpJar.apply(res);
    const location = res.headers.get("Location");
    if (!location) return (await res.text()).includes('id="idp-login"');
    url = new URL(location, url).href;
    if (!url.startsWith(idp.issuer)) return false;
  }
  throw new Error("too many redirects");
}
