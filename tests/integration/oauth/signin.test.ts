// OAuth/OIDC sign-in against the real IdP (oidc-provider over HTTP): the authorization request,
// new and returning users, the JSON-redirect client flow, access denied, and the check cookies.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getConfig } from "../../../app/auth/config.server.ts";
import { decodeJwt } from "../../../app/auth/jwt.server.ts";
import { openToken } from "../../../app/auth/oauth-tokens.server.ts";
import { providersResponse } from "../../../app/auth/endpoints.server.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, get, ORIGIN } from "../../support/http.ts";
import { ALICE, BOB, startTestIdp, TEST_CLIENT, visitIdp, type TestIdp } from "../../support/idp.ts";
import { signInByEmail } from "../../../app/auth/strategies/email.server.ts";
import { authorizationUrlOf, checkCookieChanges, deliver, sessionOf, signInThroughIdp, startSignIn } from "../../support/oauth-flow.ts";

let idp: TestIdp;

beforeAll(async () => {
  idp = await startTestIdp();
  idp.configure();
});
afterAll(() => idp?.stop());
beforeEach(() => resetDatabase());

describe(`OIDC sign-in (${dbLabel})`, () => {
  test("the provider is listed with absolute URLs and type oidc", async () => {
    const body = (await providersResponse(get("/auth/providers")).json()) as Record<string, Record<string, string>>;
    expect(body.oidc).toEqual({
      id: "oidc",
      name: "Test IdP",
      type: "oidc",
      signinUrl: `${ORIGIN}/auth/signin/oidc`,
      callbackUrl: `${ORIGIN}/auth/callback/oidc`,
    });
  });

  test("POST /auth/signin/oidc redirects to the authorization endpoint with code, PKCE S256, state and nonce", async () => {
    const jar = new CookieJar();
    const res = await startSignIn(jar, "oidc", { callbackUrl: "/account" });
    expect(res.status).toBe(302);
    const url = new URL(res.headers.get("Location")!);
    expect(url.origin).toBe(idp.issuer);
    expect(url.pathname).toBe("/auth");
    const p = url.searchParams;
    expect(p.get("response_type")).toBe("code");
    expect(p.get("client_id")).toBe(TEST_CLIENT.clientId);
    expect(p.get("redirect_uri")).toBe(`${ORIGIN}/auth/callback/oidc`);
    expect(p.get("scope")).toBe("openid profile email");
    expect(p.get("code_challenge_method")).toBe("S256");
    expect(p.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const cookies = res.headers.getSetCookie();
    for (const name of ["authjs.state", "authjs.pkce.code_verifier", "authjs.nonce"]) {
      const c = cookies.find((x) => x.startsWith(`${name}=`));
      expect(c, name).toBeDefined();
      expect(c).toMatch(/Max-Age=900/);
      expect(c).toMatch(/HttpOnly/);
      expect(c).toMatch(/SameSite=Lax/);
      expect(c).toMatch(/Path=\//);
      // Sealed with the Auth.js scheme, salt = the cookie name, bound to the provider.
      const payload = await decodeJwt({ token: decodeURIComponent(jar.get(name)!), secrets: getConfig().secrets, salt: name });
      expect(payload.provider).toBe("oidc");
      expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(900);
    }
    const state = await decodeJwt({ token: decodeURIComponent(jar.get("authjs.state")!), secrets: getConfig().secrets, salt: "authjs.state" });
    expect(state.value).toBe(p.get("state"));
    // The callback URL is remembered for the way back.
    expect(cookies.some((c) => c.startsWith("authjs.callback-url=") && c.includes(encodeURIComponent(`${ORIGIN}/account`)))).toBe(true);
  });

  test("a new user is created with a verified e-mail, lands on /welcome and has a session", async () => {
    const jar = new CookieJar();
    const { res } = await signInThroughIdp(jar, ALICE, { callbackUrl: "/account" });
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(res).toHaveSessionCookie();
    expect(checkCookieChanges(res).expired).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);

    const session = await sessionOf(jar);
    expect(session?.user).toEqual({ name: ALICE.name, email: ALICE.email, image: null });

    const user = await testDb().user.findUniqueOrThrow({ where: { email: ALICE.email }, include: { accounts: true } });
    expect(user.emailVerified).toBeInstanceOf(Date);
    expect(user.accounts).toHaveLength(1);
    const account = user.accounts[0]!;
    expect(account).toMatchObject({ provider: "oidc", type: "oidc", providerAccountId: ALICE.sub, tokenType: "bearer" });
    expect(account.scope).toContain("openid");
    expect(account.expiresAt).toBeGreaterThan(Date.now() / 1000);
    // Tokens are sealed at rest: the columns are JWEs, and they open to the real tokens.
    for (const field of ["accessToken", "refreshToken", "idToken"] as const) {
      expect(account[field]).toMatch(/^eyJ[\w-]*\.\.[\w-]+\.[\w-]+\.[\w-]+$/);
    }
    const idToken = await openToken(account.idToken, { provider: "oidc", providerAccountId: ALICE.sub, field: "idToken" });
    expect(JSON.parse(Buffer.from(idToken!.split(".")[1]!, "base64url").toString()).sub).toBe(ALICE.sub);
    // Sealed for this row and column only.
    expect(await openToken(account.idToken, { provider: "oidc", providerAccountId: ALICE.sub, field: "accessToken" })).toBeNull();

    const events = await testDb().authEvent.findMany({ where: { userId: user.id }, orderBy: { at: "asc" } });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["user-created", "signin"]));
  });

  test("an address the IdP has not verified is not given to the new user", async () => {
    const { res } = await signInThroughIdp(new CookieJar(), BOB);
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2F`);
    const account = await testDb().account.findFirstOrThrow({ where: { providerAccountId: BOB.sub }, include: { user: true } });
    expect(account.user).toMatchObject({ email: null, emailVerified: null, name: BOB.name });
    // So the mailbox's owner signing in by e-mail later gets an account of their own, not this one.
    expect(await testDb().user.findUnique({ where: { email: BOB.email } })).toBeNull();
    const byEmail = await signInByEmail({ email: BOB.email, request: new Request(`${ORIGIN}/auth/callback/email`) });
    expect(byEmail.isNewUser).toBe(true);
    expect(byEmail.user.id).not.toBe(account.userId);
  });

  test("a returning user signs into the same user and goes straight to the callback URL", async () => {
    await signInThroughIdp(new CookieJar(), ALICE);
    const jar = new CookieJar();
    const { res } = await signInThroughIdp(jar, ALICE, { callbackUrl: "/account?tab=1" });
    expect(res).toHaveRedirect(`${ORIGIN}/account?tab=1`);
    expect(res).toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(1);
    expect(await testDb().account.count()).toBe(1);
    expect((await sessionOf(jar))?.user.email).toBe(ALICE.email);
  });

  test("the IdP's own session skips its login page on the next sign-in", async () => {
    const idpJar = new CookieJar();
    await signInThroughIdp(new CookieJar(), ALICE, { idpJar });
    const jar = new CookieJar();
    const start = await startSignIn(jar);
    // No credentials: the login page must not appear.
    const answer = await visitIdp(start.headers.get("Location")!, { email: "nobody", password: "x" }, idpJar);
    expect(answer.kind).toBe("redirect");
    expect(await deliver(jar, answer)).toHaveSessionCookie();
  });

  test("next-auth/react flow: GET /auth/csrf, POST /auth/signin/oidc with json=true, follow url", async () => {
    const jar = new CookieJar();
    const start = await startSignIn(jar, "oidc", { json: true, callbackUrl: "/dashboard" });
    expect(start.status).toBe(200);
    expect(start.headers.get("Content-Type")).toContain("application/json");
    const { url } = (await start.json()) as { url: string };
    expect(new URL(url).origin).toBe(idp.issuer);
    // The same cookies as the redirect form.
    expect(checkCookieChanges(start).set).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);
    const res = await deliver(jar, await visitIdp(url, ALICE));
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Fdashboard`);
    expect((await sessionOf(jar))?.user.email).toBe(ALICE.email);
  });

  test("X-Auth-Return-Redirect: 1 gets {url} too", async () => {
    const jar = new CookieJar();
    const { fetchCsrf, post, callRoute } = await import("../../support/http.ts");
    const route = await import("../../../app/routes/auth/signin-provider.ts");
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(route.action, post("/auth/signin/oidc", { csrfToken }, { jar, headers: { "X-Auth-Return-Redirect": "1" } }), { provider: "oidc" });
    expect(res.status).toBe(200);
    expect(new URL(await authorizationUrlOf(res)).origin).toBe(idp.issuer);
  });

  test("the sign-in URL's query adds authorization parameters but cannot replace protocol ones", async () => {
    const res = await startSignIn(new CookieJar(), "oidc", { query: "?prompt=login&login_hint=alice%40example.com&redirect_uri=https%3A%2F%2Fevil.example%2F&state=x&response_mode=fragment" });
    const p = new URL(res.headers.get("Location")!).searchParams;
    expect(p.get("prompt")).toBe("login");
    expect(p.get("login_hint")).toBe("alice@example.com");
    expect(p.get("redirect_uri")).toBe(`${ORIGIN}/auth/callback/oidc`);
    expect(p.get("state")).not.toBe("x");
    expect(p.get("response_mode")).toBeNull();
    // A client's own scope is used, but an OIDC sign-in always asks for openid.
    const scoped = await startSignIn(new CookieJar(), "oidc", { query: "?scope=profile+email+offline_access" });
    expect(new URL(scoped.headers.get("Location")!).searchParams.get("scope")).toBe("openid profile email offline_access");
  });

  test("a sign-in POST without a valid CSRF token goes to MissingCSRF and sets no check cookie", async () => {
    const { callRoute, post } = await import("../../support/http.ts");
    const route = await import("../../../app/routes/auth/signin-provider.ts");
    const res = await callRoute(route.action, post("/auth/signin/oidc", { csrfToken: "0".repeat(64) }), { provider: "oidc" });
    expect(res).toHaveErrorRedirect("MissingCSRF");
    expect(checkCookieChanges(res).set).toEqual([]);
  });

  test("Cancel at the IdP (error=access_denied) ends on the AccessDenied page (403), no session, no rows, check cookies cleared", async () => {
    const jar = new CookieJar();
    const { answer, res } = await signInThroughIdp(jar, "cancel");
    expect(answer.kind === "redirect" && new URL(answer.url).searchParams.get("error")).toBe("access_denied");
    expect(res).toHaveRedirect(`${ORIGIN}/auth/error?error=AccessDenied`);
    expect(res).not.toHaveSessionCookie();
    expect(checkCookieChanges(res).expired).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);
    expect(await testDb().user.count()).toBe(0);
    expect(await testDb().account.count()).toBe(0);

    const { loader } = await import("../../../app/routes/auth/error.tsx");
    const { callRoute } = await import("../../support/http.ts");
    const page = await callRoute(loader, get("/auth/error?error=AccessDenied"));
    expect(page.status).toBe(403);
  });

  test("a code can be used once: replaying the callback fails and creates nothing more", async () => {
    const jar = new CookieJar();
    const start = await startSignIn(jar);
    const before = new CookieJar();
    for (const name of jar.names()) before.set(name, jar.get(name)!);
    const answer = await visitIdp(start.headers.get("Location")!, ALICE);
    expect(await deliver(jar, answer)).toHaveSessionCookie();
    // The same callback with the cookies as they were before it (a replay).
    const replay = await deliver(before, answer);
    expect(replay).toHaveErrorRedirect("OAuthCallback");
    expect(replay).not.toHaveSessionCookie();
    expect(await testDb().account.count()).toBe(1);
  });

  test("on https the check cookies are __Secure- and Secure, and the redirect_uri uses AUTH_URL", async () => {
    idp.configure({ AUTH_URL: "https://app.example.com" });
    try {
      const jar = new CookieJar();
      const { fetchCsrf, post, callRoute } = await import("../../support/http.ts");
      const route = await import("../../../app/routes/auth/signin-provider.ts");
      const csrfToken = await fetchCsrf(jar);
      const res = await callRoute(route.action, post("/auth/signin/oidc", { csrfToken }, { jar }), { provider: "oidc" });
      expect(new URL(res.headers.get("Location")!).searchParams.get("redirect_uri")).toBe("https://app.example.com/auth/callback/oidc");
      const names = res.headers.getSetCookie().filter((c) => /authjs\.(state|nonce|pkce)/.test(c));
      expect(names.map((c) => c.slice(0, c.indexOf("=")))).toEqual(["__Secure-authjs.state", "__Secure-authjs.pkce.code_verifier", "__Secure-authjs.nonce"]);
      for (const c of names) expect(c).toMatch(/; Secure; SameSite=Lax$/);
    } finally {
      delete process.env.AUTH_URL;
      idp.configure();
    }
  });
});
