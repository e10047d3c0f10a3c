// The re-authentication page /auth/reauth (ADR 080): the signed-in user proves one
// of their own factors again — password, an e-mailed code, the OpenID provider their account is
// linked to — then the second factor when it is on, and comes back to the page recent, under a
// new session id. Sessions are aged by moving authenticatedAt back (tests/support/reauth.ts).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { requireRecentAuth } from "../../../app/auth/index.ts";
import { refreshRevocations, resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import * as account from "../../../app/routes/account.tsx";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http.ts";
import { ALICE, BOB, startTestIdp, visitIdp, type TestIdp } from "../../support/idp.ts";
import { deliver, sessionOf, signInThroughIdp, startSignIn } from "../../support/oauth-flow.ts";
import { HOSTILE_CLIENT, startHostileIdp, type HostileIdp } from "../../support/hostile-idp.ts";
import { clearOAuthCaches } from "../../../app/auth/oauth/http.server.ts";
import { ageSession, isReauthRefusal, reauthenticate, reauthPage, reauthRefusalPage, sessionIdOf, type ReauthPageData } from "../../support/reauth.ts";
import { waitForMessages, type ReceivedMessage } from "../../support/smtp-sink.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import * as callbackRoute from "../../../app/routes/auth/callback.ts";
import * as optionsRoute from "../../../app/routes/auth/webauthn-options.ts";
import { SoftwareAuthenticator } from "../../support/passkey-authenticator.ts";
import { advance, codeAt, enrolled, useStepClock } from "../two-factor/helpers.ts";

const smtp = useSmtpSink(null);
let idp: TestIdp;
let hostile: HostileIdp;
beforeAll(async () => {
  idp = await startTestIdp();
  hostile = await startHostileIdp();
});
afterAll(async () => {
  await idp?.stop();
  await hostile?.stop();
});
afterEach(async () => {
  vi.useRealTimers();
  await mailSenderIdle();
});

const REAUTH_URL = `${ORIGIN}/auth/reauth?callbackUrl=%2Faccount`;

function copyOf(jar: CookieJar): CookieJar {
  const copy = new CookieJar();
  for (const name of jar.names()) copy.set(name, jar.get(name)!);
  return copy;
}

/** Whether the jar's session passes the recent sign-in rule now. */
async function isRecent(jar: CookieJar): Promise<boolean> {
  return requireRecentAuth(get("/app/transfer", { jar })).then(
    () => true,
    () => false,
  );
}

async function events(type: string) {
  return testDb().authEvent.findMany({ where: { type }, orderBy: { at: "asc" } });
}

function codeIn(message: ReceivedMessage): string {
  const match = /\b(\d{6})\b/.exec(message.text ?? "");
  if (!match) throw new Error(`no code in: ${message.text}`);
  return match[1]!;
}

/** POST /account as the form does, or as a JSON client through the route's middleware. */
async function accountPost(jar: CookieJar, fields: Record<string, string>, { json = false } = {}) {
  const csrfToken = await fetchCsrf(jar);
  const request = post("/account", { csrfToken, ...fields }, { jar, headers: json ? { "X-Auth-Return-Redirect": "1" } : {} });
  const res = (await account.middleware[0]!({ request } as never, () => callRoute(account.action, request))) as Response;
  jar.apply(res);
  return res;
}

async function passkeyOptions(jar: CookieJar, action: string) {
  const res = await callRoute(optionsRoute.loader, get(`/auth/webauthn-options/passkey?action=${action}`, { jar }), { provider: "passkey" });
  jar.apply(res);
  return { res, body: (await res.json()) as { action: string; options: any; error?: string } };
}

/** A signed-in browser of `email` (a password user) with one passkey added right after signing in. */
async function withPasskey(email: string) {
  await createUser(email);
  const { jar } = await signIn(new CookieJar(), email);
  const authenticator = new SoftwareAuthenticator();
  const { body } = await passkeyOptions(jar, "register");
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/passkey", { csrfToken: await fetchCsrf(jar), action: "register", data: JSON.stringify(authenticator.register(body.options)) }, { jar }),
    { provider: "passkey" },
  );
  jar.apply(res);
  expect(res).toHaveRedirect();
  return { jar, authenticator };
}

describe.each(["jwt", "database"] as const)(`/auth/reauth, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    resetRevocations();
    idp.configure({});
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: strategy, AUTH_CREDENTIALS: "true" }));
  });

  it("a signed-out visitor is sent to the sign-in page, which comes back to the same page", async () => {
    const res = await reauthPage(new CookieJar(), "/account?tab=email");
    expect(res).toHaveRedirect("/auth/signin?callbackUrl=%2Faccount%3Ftab%3Demail");
    const posted = await reauthenticate(new CookieJar(), { password: PASSWORD }, { csrfToken: await fetchCsrf(new CookieJar()) });
    expect(posted.status).toBe(302);
  });

  it("the owner of an old session confirms with the password: back to the page, recent again, under a new session id; a copy of the old cookie is not", async () => {
    await createUser();
    const { jar } = await signIn();
    const before = await ageSession(jar, 11);
    const thief = copyOf(jar);
    expect(await isRecent(jar)).toBe(false);
    const page = await reauthPage(jar);
    expect(page.status).toBe(200);
    const data = (await page.json()) as ReauthPageData;
    expect(data.methods.password).toBe("credentials");
    expect(data.methods.email).toBe("email");
    expect(data.methods.providers).toEqual([]);
    const res = await reauthenticate(jar, { password: PASSWORD });
    expect(res).toHaveRedirect("/account");
    expect(res).toHaveSessionCookie();
    expect(await isRecent(jar)).toBe(true);
    const after = await sessionIdOf(jar);
    expect(after).not.toBe(before);
    // Still the same sign-in: its start and method stay; one session in the list.
    const rows = await testDb().session.findMany({ where: { revokedAt: null } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.method).toBe("credentials");
    // The copy taken before ends with the old id: it never becomes recent.
    await refreshRevocations();
    expect(await sessionOf(thief)).toBeNull();
    const [event] = await events("reauthenticated");
    expect(JSON.parse(event!.detail!)).toMatchObject({ provider: "credentials", factors: ["pwd"] });
  });

  it("a wrong password changes nothing and counts as a failed credentials attempt, the same counters as the sign-in form", async () => {
    configure({ AUTH_RATE_LIMIT_CREDENTIALS_DEVICE: "3/900", AUTH_RATE_LIMIT_CREDENTIALS_ACCOUNT_CLIENT: "3/900" });
    await createUser();
    const { jar } = await signIn();
    const id = await ageSession(jar, 11);
    for (let i = 0; i < 3; i++) {
      // Back to the page (a redirect, so Back after the right password never lands on a POST), which says why.
      // With few tries left before the pause, it says how many, as the sign-in page does (the last one pauses).
      const res = await reauthenticate(jar, { password: "not the password" });
      const left = 2 - i;
      expect(res).toHaveRedirect(`${REAUTH_URL}&refused=password${left > 0 ? `&tries=${left}` : ""}`);
      const error = (await reauthRefusalPage(jar, res)).error;
      expect(error).toMatch(/not right/);
      if (left === 2) expect(error).toMatch(/You have 2 more tries before sign-in with a password is paused/);
      if (left === 1) expect(error).toMatch(/You have 1 more try before/);
    }
    expect(await sessionIdOf(jar)).toBe(id);
    expect(await isRecent(jar)).toBe(false);
    expect(await events("signin-failed")).toHaveLength(3);
    // The budget is spent: the right password is refused here, and on the sign-in form too.
    const limited = await reauthenticate(jar, { password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toMatch(/^\d+$/);
    const { res: signin } = await signIn(copyOf(jar));
    expect(signin).toHaveErrorRedirect("RateLimited");
    expect(await isRecent(jar)).toBe(false);
  });

  it("a JSON client gets {url}: back to the page, or the page with ?error=CredentialsSignin", async () => {
    await createUser();
    const { jar } = await signIn();
    await ageSession(jar, 11);
    const wrong = await reauthenticate(jar, { password: "nope" }, { json: true });
    expect(wrong.status).toBe(200);
    expect(await wrong.json()).toEqual({ url: `${REAUTH_URL}&error=CredentialsSignin` });
    const right = await reauthenticate(jar, { password: PASSWORD }, { json: true });
    expect(await right.json()).toEqual({ url: `${ORIGIN}/account` });
    expect(await isRecent(jar)).toBe(true);
  });

  it("a POST without the CSRF token, or from another site, changes nothing", async () => {
    await createUser();
    const { jar } = await signIn();
    await ageSession(jar, 11);
    expect(await reauthenticate(jar, { password: PASSWORD }, { csrfToken: null })).toHaveErrorRedirect("MissingCSRF");
    const csrfToken = ((await (await reauthPage(jar)).json()) as ReauthPageData).csrfToken;
    const foreign = await reauthenticate(jar, { password: PASSWORD }, { csrfToken, headers: { Origin: "https://evil.example" } });
    expect(foreign).toHaveErrorRedirect("MissingCSRF");
    expect(await isRecent(jar)).toBe(false);
  });

  it("hostile input (NUL, unknown providers, garbage answers, a huge password) is refused below 500 and changes nothing", async () => {
    await createUser();
    const { jar } = await signIn();
    await ageSession(jar, 11);
    const page = await reauthPage(jar, "/\u0000", "&error=%00&step=%00");
    expect(page.status).toBe(200);
    expect(((await page.json()) as ReauthPageData).callbackUrl).toBe("/account");
    const attempts: Record<string, string>[] = [
      { provider: "credentials\u0000", password: PASSWORD },
      { provider: "nobody" },
      { provider: "credentials", password: `${PASSWORD}\u0000` },
      { provider: "credentials", password: "x".repeat(5000) },
      { provider: "email", step: "code", code: "\u0000" },
      { provider: "email", step: "code", code: "12".repeat(100) },
      { provider: "passkey", data: "not json" },
      { provider: "passkey", data: JSON.stringify({ id: "x", rawId: "x", type: "public-key", response: {} }) },
      { provider: "oidc" },
    ];
    for (const fields of attempts) {
      const res = await reauthenticate(jar, fields);
      // Refused: back to the page naming why, or a 4xx; never a 500.
      if (!isReauthRefusal(res)) expect(res.status, JSON.stringify(fields).slice(0, 60)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect(await isRecent(jar)).toBe(false);
    expect(await events("reauthenticated")).toHaveLength(0);
  });

  it("a callbackUrl on another origin is not followed: the page goes back to /account", async () => {
    await createUser();
    const { jar } = await signIn();
    await ageSession(jar, 11);
    const page = (await (await reauthPage(jar, "https://evil.example/steal")).json()) as ReauthPageData;
    expect(page.callbackUrl).toBe("/account");
    const res = await reauthenticate(jar, { password: PASSWORD }, { callbackUrl: "//evil.example/steal" });
    expect(res).toHaveRedirect(`${ORIGIN}/account`);
  });

  it("an e-mailed code: sent to the account's address, typed in the browser and session that asked", async () => {
    const user = await testDb().user.create({ data: { email: "eve@example.com", emailVerified: new Date() } });
    const jar = new CookieJar();
    const { createSession } = await import("../../../app/auth/core/session.server.ts");
    const { authRequest } = await import("../../../app/auth/core/request.server.ts");
    jar.apply(await createSession(authRequest(get("/")), user, { method: "email" }));
    await ageSession(jar, 11);
    const data = (await (await reauthPage(jar)).json()) as ReauthPageData;
    expect(data.methods).toMatchObject({ password: null, email: "email" });
    const sent = await reauthenticate(jar, { provider: "email", step: "send" });
    expect(sent).toHaveRedirect(`${REAUTH_URL}&step=code`);
    expect(((await (await reauthPage(jar, "/account", "&step=code")).json()) as ReauthPageData).step).toBe("code");
    const [message] = await waitForMessages(smtp.sink, 1);
    expect(message!.envelope.to).toEqual(["eve@example.com"]);
    expect((await events("email-sent")).map((e) => JSON.parse(e.detail!).purpose)).toEqual(["reauth"]);
    // A code only: nothing in it signs in anywhere.
    expect(message!.text).not.toMatch(/https?:\/\//);
    const code = codeIn(message!);
    const wrong = await reauthenticate(jar, { provider: "email", step: "code", code: code === "000000" ? "111111" : "000000" });
    expect(wrong).toHaveRedirect(`${REAUTH_URL}&refused=codeWrong&tries=4&step=code`);
    const again = await reauthRefusalPage(jar, wrong);
    expect(again.step).toBe("code");
    expect(again.error).toBe("That code is not right. 4 tries are left.");
    const res = await reauthenticate(jar, { provider: "email", step: "code", code });
    expect(res).toHaveRedirect("/account");
    expect(await isRecent(jar)).toBe(true);
    // Used once.
    await ageSession(jar, 11);
    expect((await reauthRefusalPage(jar, await reauthenticate(jar, { provider: "email", step: "code", code }))).error).toMatch(/code/);
  });

  it("a code typed in another browser of the same account, or in a copy of the session without the code's cookie, is refused", async () => {
    await createUser("eve@example.com");
    const { jar } = await signIn(new CookieJar(), "eve@example.com");
    const { jar: other } = await signIn(new CookieJar(), "eve@example.com");
    await ageSession(jar, 11);
    await ageSession(other, 11);
    const thief = copyOf(jar);
    expect(await reauthenticate(jar, { provider: "email", step: "send" })).toHaveRedirect(`${REAUTH_URL}&step=code`);
    const code = codeIn((await waitForMessages(smtp.sink, 1))[0]!);
    for (const browser of [other, thief]) {
      const res = await reauthenticate(browser, { provider: "email", step: "code", code });
      expect(isReauthRefusal(res)).toBe(true);
      expect(await isRecent(browser)).toBe(false);
    }
    // The asking browser still can.
    expect(await reauthenticate(jar, { provider: "email", step: "code", code })).toHaveRedirect("/account");
  });

  it("with the second factor on, the password is followed by the code, and only then is the session recent", async () => {
    useStepClock();
    await createUser();
    const { jar, secret } = await enrolled();
    await ageSession(jar, 11);
    const first = await reauthenticate(jar, { password: PASSWORD });
    expect(first).toHaveRedirect("/auth/two-factor");
    expect(await isRecent(jar)).toBe(false);
    const twoFactor = await import("../../../app/routes/auth/two-factor.tsx");
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(twoFactor.action, post("/auth/two-factor", { csrfToken, code: codeAt(secret) }, { jar }));
    jar.apply(res);
    expect(res).toHaveRedirect("/account");
    expect(await isRecent(jar)).toBe(true);
    const [event] = await events("reauthenticated");
    expect(JSON.parse(event!.detail!).factors).toEqual(["pwd", "otp", "mfa"]);
    // The pending re-authentication renews only the session that asked for it.
    await ageSession(jar, 11);
    expect(await reauthenticate(jar, { password: PASSWORD })).toHaveRedirect("/auth/two-factor");
    const { jar: stranger } = await signIn(new CookieJar());
    stranger.set("authjs.two-factor", jar.get("authjs.two-factor")!);
    advance(30);
    const crossed = await callRoute(twoFactor.action, post("/auth/two-factor", { csrfToken: await fetchCsrf(stranger), code: codeAt(secret) }, { jar: stranger }));
    expect(crossed).toHaveErrorRedirect("TwoFactorExpired");
  });

  it("a session signed in before the second factor was on, once re-authenticated with the code, counts as having proved it (may add a passkey)", async () => {
    useStepClock();
    await createUser();
    const { jar, secret } = await enrolled();
    expect((await passkeyOptions(jar, "register")).res.status).toBe(401);
    await reauthenticate(jar, { password: PASSWORD });
    const twoFactor = await import("../../../app/routes/auth/two-factor.tsx");
    const res = await callRoute(twoFactor.action, post("/auth/two-factor", { csrfToken: await fetchCsrf(jar), code: codeAt(secret) }, { jar }));
    jar.apply(res);
    expect(res).toHaveRedirect("/account");
    expect((await passkeyOptions(jar, "register")).res.status).toBe(200);
  });

  it("the user's own passkey confirms it (the options allow only theirs); another account's passkey does not", async () => {
    const ada = await withPasskey("ada@example.com");
    const eve = await withPasskey("eve@example.com");
    await ageSession(ada.jar, 11);
    const data = (await (await reauthPage(ada.jar)).json()) as ReauthPageData;
    expect(data.methods.passkey).toBe("passkey");

    const { body } = await passkeyOptions(ada.jar, "reauthenticate");
    expect(body.options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([ada.authenticator.id]);
    const foreign = await reauthenticate(ada.jar, { provider: "passkey", data: JSON.stringify(eve.authenticator.authenticate(body.options)) });
    expect(foreign).toHaveRedirect(`${REAUTH_URL}&refused=passkey`);
    expect((await reauthRefusalPage(ada.jar, foreign)).error).toMatch(/not one of yours/);
    expect(await isRecent(ada.jar)).toBe(false);

    const again = await passkeyOptions(ada.jar, "reauthenticate");
    const res = await reauthenticate(ada.jar, { provider: "passkey", data: JSON.stringify(ada.authenticator.authenticate(again.body.options)) });
    expect(res).toHaveRedirect("/account");
    expect(await isRecent(ada.jar)).toBe(true);
    const [event] = await events("reauthenticated");
    expect(JSON.parse(event!.detail!)).toMatchObject({ provider: "passkey", factors: ["hwk", "mfa"] });
    // A signed-out browser gets no such options.
    expect((await passkeyOptions(new CookieJar(), "reauthenticate")).res.status).toBe(400);
  });

  it("the linked OpenID provider, asked with prompt=login and max_age=0, confirms its own account", async () => {
    const jar = new CookieJar();
    await signInThroughIdp(jar, ALICE);
    await ageSession(jar, 11);
    const data = (await (await reauthPage(jar)).json()) as ReauthPageData;
    expect(data.methods.providers).toEqual([{ id: "oidc", name: "Test IdP" }]);
    const start = await reauthenticate(jar, { provider: "oidc" });
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get("Location")!);
    expect(authorize.origin).toBe(new URL(idp.issuer).origin);
    expect(authorize.searchParams.get("prompt")).toBe("login");
    expect(authorize.searchParams.get("max_age")).toBe("0");
    const res = await deliver(jar, await visitIdp(authorize.href, ALICE));
    expect(res).toHaveRedirect("/account");
    expect(await isRecent(jar)).toBe(true);
    expect(await testDb().user.count()).toBe(1);
    const [event] = await events("reauthenticated");
    expect(JSON.parse(event!.detail!)).toMatchObject({ provider: "oidc", factors: ["fed"] });
  });

  it("the provider answering with another provider account is refused: no link, no switch, nothing recent", async () => {
    const jar = new CookieJar();
    await signInThroughIdp(jar, ALICE);
    const id = await ageSession(jar, 11);
    const start = await reauthenticate(jar, { provider: "oidc" });
    const res = await deliver(jar, await visitIdp(start.headers.get("Location")!, BOB));
    expect(res).toHaveRedirect(`${REAUTH_URL}&error=OAuthAccountNotLinked`);
    expect(res).not.toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(1);
    expect(await testDb().account.count()).toBe(1);
    expect(await sessionIdOf(jar)).toBe(id);
    expect((await sessionOf(jar))?.user.email).toBe(ALICE.email);
    expect(await isRecent(jar)).toBe(false);
    expect(await events("reauthenticated")).toHaveLength(0);
  });

  it("a user without a linked account cannot re-authenticate through the provider", async () => {
    await createUser();
    const { jar } = await signIn();
    await ageSession(jar, 11);
    const res = await reauthenticate(jar, { provider: "oidc" });
    expect((await reauthRefusalPage(jar, res)).error).toMatch(/not linked/);
  });

  it("an old session changing the e-mail address: 403 JSON with the reauth url, then re-authentication, then the change goes through", async () => {
    await createUser();
    const { jar } = await signIn();
    await ageSession(jar, 11);
    const refused = await accountPost(jar, { intent: "change-email", email: "new@example.com" }, { json: true });
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: string; url: string };
    expect(body).toEqual({ error: "ReauthRequired", url: REAUTH_URL });
    const back = new URL(body.url).searchParams.get("callbackUrl")!;
    expect(await reauthenticate(jar, { password: PASSWORD }, { callbackUrl: back, json: true }).then((r) => r.json())).toEqual({ url: `${ORIGIN}/account` });
    const done = await accountPost(jar, { intent: "change-email", email: "new@example.com" }, { json: true });
    expect(done.status).not.toBe(403);
    expect(await testDb().verificationToken.count({ where: { purpose: "change-email" } })).toBe(1);
  });
});

describe(`/auth/reauth at a provider that reuses an old login (${dbLabel})`, () => {
  beforeEach(() => {
    resetRevocations();
    configure({
      ...smtpEnv(smtp.sink.url),
      AUTH_OIDC_ISSUER: hostile.issuer,
      AUTH_OIDC_ID: HOSTILE_CLIENT.clientId,
      AUTH_OIDC_SECRET: HOSTILE_CLIENT.clientSecret,
      AUTH_OIDC_NAME: "Hostile IdP",
    });
    clearOAuthCaches();
  });
  afterAll(() => clearOAuthCaches());

  /** The provider's answer to an authorization request, delivered to the app's callback. */
  async function answer(jar: CookieJar, location: string) {
    const authz = await fetch(location, { redirect: "manual" });
    return deliver(jar, { kind: "redirect", url: authz.headers.get("Location")! });
  }

  it("an ID token whose auth_time is an hour old is refused: the session stays as it was", async () => {
    hostile.reset("ok");
    const jar = new CookieJar();
    const signedIn = await answer(jar, (await startSignIn(jar, "oidc")).headers.get("Location")!);
    expect(signedIn).toHaveSessionCookie();
    const id = await ageSession(jar, 11);
    hostile.reset("stale-auth-time");
    const start = await reauthenticate(jar, { provider: "oidc" });
    expect(new URL(start.headers.get("Location")!).searchParams.get("max_age")).toBe("0");
    const res = await answer(jar, start.headers.get("Location")!);
    expect(res).toHaveRedirect(`${REAUTH_URL}&error=OAuthCallback`);
    expect(await sessionIdOf(jar)).toBe(id);
    expect(await isRecent(jar)).toBe(false);
    // The same provider answering with a fresh login is accepted.
    hostile.reset("ok");
    const again = await reauthenticate(jar, { provider: "oidc" });
    expect(await answer(jar, again.headers.get("Location")!)).toHaveRedirect("/account");
    expect(await isRecent(jar)).toBe(true);
  });
});
