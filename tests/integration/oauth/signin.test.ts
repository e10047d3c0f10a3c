// OAuth/OIDC sign-in against the real IdP (oidc-provider over HTTP): the authorization request,
// new and returning users, the JSON-redirect client flow, access denied, and the check cookies.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { decodeJwt } from "../../../app/auth/core/jwt.server.ts";
import { openToken } from "../../../app/auth/oauth/tokens.server.ts";
import { providersResponse } from "../../../app/auth/signin/endpoint.server.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, get, ORIGIN } from "../../support/http.ts";
import { ALICE, BOB, startTestIdp, TEST_CLIENT, visitIdp, type TestIdp } from "../../support/idp.ts";
import { signInByEmail } from "../../../app/auth/email/strategy.server.ts";
import { authorizationUrlOf, checkCookieChanges, deliver, sessionOf, signInThroughIdp, startSignIn } from "../../support/oauth-flow.ts";
import { sessionUserOf } from "../../support/session-user.ts";

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
    expect(session?.user).toEqual(await sessionUserOf({ name: ALICE.name, email: ALICE.email, image: null }));

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

  test("a profile address is used only when it is one plain address by the e-mail rule, exactly as the provider gave it", async () => {
    const verified = (n: number, email: string) => ({ sub: `idp-eve-${n}`, email, emailVerified: true, name: `Eve ${n}`, password: `eve-password-${n}` });
    const users = [
      verified(1, '"eve"@example.com'), // a quoted local part
      verified(2, "eve@localhost"), // a host without a dot
      verified(3, "ｅｖｅ@example.com"), // full-width: NFKC would turn it into another address
      verified(4, `${"e".repeat(250)}@example.com`), // longer than an address may be
      verified(5, "Eve@Example.com"), // control: only lower-cased
    ];
    const other = await startTestIdp({ users });
    other.configure();
    try {
      for (const user of users) {
        const { res } = await signInThroughIdp(new CookieJar(), user);
        expect(res, user.email).toHaveSessionCookie();
      }
      const stored = await testDb().account.findMany({ include: { user: true }, orderBy: { providerAccountId: "asc" } });
      expect(stored.map((a) => [a.providerAccountId, a.user.email])).toEqual([
        ["idp-eve-1", null],
        ["idp-eve-2", null],
        ["idp-eve-3", null],
        ["idp-eve-4", null],
        ["idp-eve-5", "eve@example.com"],
      ]);
    } finally {
      await other.stop();
      idp.configure();
    }
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

  test("only named authorization parameters pass from the sign-in URL's query to the provider", async () => {
    // What a client may add (Auth.js's third signIn() argument): how to ask, never what or where.
    const allowed = {
      login_hint: "alice@example.com",
      prompt: "login",
      ui_locales: "fr-CA fr",
      max_age: "600",
      acr_values: "urn:mace:incommon:iap:silver",
      display: "popup",
    };
    const refused = {
      redirect_uri: "https://evil.example/cb",
      client_id: "another-client",
      client_secret: "guess",
      scope: "openid offline_access admin",
      response_type: "token",
      state: "chosen-state",
      nonce: "chosen-nonce",
      code_challenge: "chosen-challenge",
      code_challenge_method: "plain",
      request: "eyJhbGciOiJub25lIn0.e30.",
      request_uri: "urn:ietf:params:oauth:request_uri:x",
      claims: '{"id_token":{"email":null}}',
      resource: "https://api.example/",
      audience: "https://api.example/",
      id_token_hint: "eyJ.x.y",
      registration: "{}",
      foo: "bar",
      callbackUrl: "/elsewhere",
      csrfToken: "0".repeat(64),
      json: "true",
    };
    const res = await startSignIn(new CookieJar(), "oidc", { query: `?${new URLSearchParams({ ...allowed, ...refused })}` });
    const p = new URL(res.headers.get("Location")!).searchParams;
    for (const [name, value] of Object.entries(allowed)) expect(p.get(name), name).toBe(value);
    // Every other parameter is the flow's own, whatever the query said.
    const own = ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "nonce"];
    expect([...p.keys()].sort()).toEqual([...own, ...Object.keys(allowed)].sort());
    expect(p.get("response_type")).toBe("code");
    expect(p.get("client_id")).toBe(TEST_CLIENT.clientId);
    expect(p.get("redirect_uri")).toBe(`${ORIGIN}/auth/callback/oidc`);
    expect(p.get("scope")).toBe("openid profile email");
    expect(p.get("code_challenge_method")).toBe("S256");
    for (const name of ["state", "nonce", "code_challenge"] as const) expect(p.get(name)).not.toBe(refused[name]);
  });

  test("response_mode passes only as query or form_post; max_age only as a number of seconds", async () => {
    const p = async (query: string) => new URL((await startSignIn(new CookieJar(), "oidc", { query })).headers.get("Location")!).searchParams;
    expect((await p("?response_mode=form_post")).get("response_mode")).toBe("form_post");
    expect((await p("?response_mode=fragment")).get("response_mode")).toBeNull();
    expect((await p("?response_mode=web_message")).get("response_mode")).toBeNull();
    expect((await p("?max_age=0")).get("max_age")).toBe("0");
    for (const bad of ["-1", "1e3", "soon", "0x10", "99999999999"]) expect((await p(`?max_age=${bad}`)).get("max_age"), bad).toBeNull();
  });

  test("a plain OAuth 2.0 provider gets no max_age (without an ID token nothing could check it)", async () => {
    idp.configure({ AUTH_GITHUB_ID: "gh-client", AUTH_GITHUB_SECRET: "gh-secret" });
    try {
      const res = await startSignIn(new CookieJar(), "github", { query: "?max_age=60&prompt=consent" });
      const p = new URL(res.headers.get("Location")!).searchParams;
      expect(p.get("prompt")).toBe("consent");
      expect(p.get("max_age")).toBeNull();
    } finally {
      delete process.env.AUTH_GITHUB_ID;
      delete process.env.AUTH_GITHUB_SECRET;
      idp.configure();
    }
  });

  test("a sign-in POST without a valid CSRF token goes to MissingCSRF and sets no check cookie", async () => {
    const { callRoute, post } = await import("../../support/http.ts");
    const route = await import("../../../app/routes/auth/signin-provider.ts");
    const res = await callRoute(route.action, post("/auth/signin/oidc", { csrfToken: "0".repeat(64) }), { provider: "oidc" });
    expect(res).toHaveErrorRedirect("MissingCSRF");
    expect(checkCookieChanges(res).set).toEqual([]);
  });

  test("a visitor who presses Cancel at the IdP (error=access_denied) is told on the sign-in page they cancelled, not denied; no session, no rows, check cookies cleared", async () => {
    const jar = new CookieJar();
    const { answer, res } = await signInThroughIdp(jar, "cancel");
    expect(answer.kind === "redirect" && new URL(answer.url).searchParams.get("error")).toBe("access_denied");
    expect(res).toHaveRedirect(`${ORIGIN}/auth/signin?error=OAuthCancelled&provider=oidc`);
    expect(res).not.toHaveSessionCookie();
    expect(checkCookieChanges(res).expired).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);
    expect(await testDb().user.count()).toBe(0);
    expect(await testDb().account.count()).toBe(0);

    const { loader } = await import("../../../app/routes/auth/signin.tsx");
    const { callRoute } = await import("../../support/http.ts");
    const page = await (await callRoute(loader, get("/auth/signin?error=OAuthCancelled&provider=oidc", { jar }))).json();
    expect(page.error).toEqual({ code: "OAuthCancelled", message: "You cancelled signing in with Test IdP. Choose another way or try again." });
    // A provider this site does not offer is never named: the words come from the configuration only.
    const forged = await (await callRoute(loader, get("/auth/signin?error=OAuthCancelled&provider=Evil%20call%20555", { jar }))).json();
    expect(forged.error.message).toBe("You cancelled signing in. Choose another way or try again.");
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
