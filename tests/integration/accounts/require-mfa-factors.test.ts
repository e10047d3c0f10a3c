// AUTH_REQUIRE_MFA=true is a property of the session's factors, enforced on every path (ADR 104):
// a user whose "second factor" is a passkey and who signs in with one factor alone (a password, an
// e-mail link or code, an OpenID provider, a password reset) gets no session but the second step,
// where the passkey (or a TOTP or recovery code) finishes the sign-in; a session that did not
// prove two factors (from before the passkey was added) reaches no page, data request, action or
// JSON answer until it proves the second one. Sent through React Router's own request handler, so
// the root middleware runs as in production; both strategies, both databases.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import { appHandler } from "../../support/app-handler.ts";
import { createUser, PASSWORD } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";
import { SoftwareAuthenticator } from "../../support/passkey-authenticator.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { configure, useSmtpSink } from "../email/helpers.ts";

const smtp = useSmtpSink();
let handle: (request: Request) => Promise<Response>;
let idp: TestIdp;
beforeAll(async () => {
  handle = await appHandler();
  idp = await startTestIdp();
});
afterAll(() => idp?.stop());

type Sent = { body?: Record<string, string>; headers?: Record<string, string>; json?: unknown };

async function send(jar: CookieJar, path: string, { body, headers = {}, json }: Sent = {}) {
  const res = await handle(
    new Request(ORIGIN + path, {
      method: body || json ? "POST" : "GET",
      headers: {
        Cookie: jar.header(),
        Origin: ORIGIN,
        ...(body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
        ...(json ? { "Content-Type": "application/json" } : {}),
        ...headers,
      },
      body: body ? new URLSearchParams(body) : json ? JSON.stringify(json) : undefined,
    }),
  );
  jar.apply(res);
  return res;
}

async function csrf(jar: CookieJar): Promise<string> {
  return ((await (await send(jar, "/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
}

async function sessionOf(jar: CookieJar) {
  return (await (await send(jar, "/auth/session")).json()) as { user: { email: string } } | null;
}

async function passwordSignIn(jar = new CookieJar(), email = "ada@example.com", password = PASSWORD) {
  const res = await send(jar, "/auth/callback/credentials", { body: { csrfToken: await csrf(jar), email, password, callbackUrl: "/account" } });
  return { jar, res };
}

/** Registers a passkey for the signed-in `jar` through the real options and callback. */
async function registerPasskey(jar: CookieJar, authenticator: SoftwareAuthenticator) {
  const options = (await (await send(jar, "/auth/webauthn-options/passkey?action=register")).json()) as { options: never };
  return send(jar, "/auth/callback/passkey", {
    body: { csrfToken: await csrf(jar), action: "register", data: JSON.stringify(authenticator.register(options.options)), callbackUrl: "/account" },
  });
}

/** The passkey second step of the pending sign-in in `jar`: options for it, the authenticator's answer, posted to the step. */
async function passkeyStep(jar: CookieJar, authenticator: SoftwareAuthenticator) {
  const optionsRes = await send(jar, "/auth/webauthn-options/passkey?action=second-step");
  expect(optionsRes.status).toBe(200);
  const { options } = (await optionsRes.json()) as { options: never };
  return send(jar, "/auth/two-factor", { body: { csrfToken: await csrf(jar), action: "second-step", data: JSON.stringify(authenticator.authenticate(options)) } });
}

/** The factors of the one session row `finish` created (rows of the same second are told apart by id, not by time). */
async function factorsOfNewSession(finish: () => Promise<Response>): Promise<string | null> {
  const before = new Set((await testDb().session.findMany({ select: { id: true } })).map((r) => r.id));
  await finish();
  const created = (await testDb().session.findMany({ select: { id: true, factors: true } })).filter((r) => !before.has(r.id));
  expect(created).toHaveLength(1);
  return created[0]!.factors;
}

/** Ada with a password and a passkey (no TOTP), and the authenticator holding it. */
async function adaWithPasskey() {
  await createUser();
  const authenticator = new SoftwareAuthenticator();
  const { jar } = await passwordSignIn();
  expect(await registerPasskey(jar, authenticator)).toHaveRedirect(`${ORIGIN}/account`);
  expect(await testDb().passkey.count()).toBe(1);
  return { authenticator, enrolmentJar: jar };
}

/** Every protected thing a one-factor session must not reach: pages, data requests, actions, JSON. */
async function expectHeldAtSecondFactor(jar: CookieJar) {
  for (const page of ["/", "/account", "/account/email", "/welcome", "/admin", "/admin/users"]) {
    const res = await send(jar, page);
    expect(res.status, page).toBe(302);
    expect(res.headers.get("Location"), page).toMatch(/\/auth\/reauth\?/);
  }
  for (const data of ["/account.data", "/account.data?_routes=routes%2Faccount", "/_root.data", "/admin.data", "/account/email.data"]) {
    const res = await send(jar, data);
    const text = await res.text();
    expect(text, data).not.toContain("ada@example.com");
    expect(text, data).toContain("/auth/reauth");
  }
  // The way back names the page, never its data twin or the script's own parameters (`_routes`, `index`).
  for (const [data, page] of [
    ["/_root.data?index&_routes=root", "/"],
    ["/account.data?updated=x&index&_routes=routes%2Faccount", "/account?updated=x"],
  ] as const) {
    const res = await send(jar, data, { headers: { Accept: "application/json" } });
    expect(res.status, data).toBe(403);
    const { url } = (await res.json()) as { url: string };
    expect(new URL(url).searchParams.get("callbackUrl"), data).toBe(page);
  }
  const json = await send(jar, "/account", { headers: { Accept: "application/json" } });
  expect(json.status).toBe(403);
  expect(((await json.json()) as { error: string; url: string }).error).toBe("SecondFactorRequired");
  const token = await csrf(jar);
  for (const intent of ["update-profile", "account-export", "revoke-all", "totp-start", "account-delete", "change-email", "passkey-remove"]) {
    const res = await send(jar, "/account", { body: { csrfToken: token, intent, name: "Mallory", json: "true" } });
    expect(res.status, intent).toBe(403);
    expect(((await res.json()) as { error: string }).error, intent).toBe("SecondFactorRequired");
  }
  const update = await send(jar, "/auth/session", { json: { csrfToken: token, data: { name: "Mallory" } } });
  expect(update.status).toBe(403);
  // Registering another passkey would turn this one factor into two: refused.
  const more = await send(jar, "/auth/webauthn-options/passkey?action=register");
  expect(more.status).toBe(401);
  // Its words fit a user whose only second factor is a passkey: no "authenticator code".
  expect(await more.json()).toEqual({ error: "Sign in again with your second factor to add a passkey." });
  const user = await testDb().user.findFirstOrThrow({ where: { email: "ada@example.com" } });
  expect(user.name).toBe("Ada");
  expect(await testDb().passkey.count({ where: { userId: user.id } })).toBe(1);
}

describe.each(["jwt", "database"] as const)(`AUTH_REQUIRE_MFA=true with a passkey as the second factor, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    resetRevocations();
    configure({ AUTH_SESSION_STRATEGY: strategy, AUTH_REQUIRE_MFA: "true", AUTH_ASSURANCE: undefined, AUTH_PASSWORD_MIN_LENGTH: undefined });
  });

  it("a thief with the password gets no session: the sign-in ends on the second step, which the owner's passkey finishes (pwd hwk mfa)", async () => {
    const { authenticator } = await adaWithPasskey();
    const { jar, res } = await passwordSignIn();
    expect(res).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(res).not.toHaveSessionCookie();
    expect(await sessionOf(jar)).toBeNull();
    // The step offers the passkey and says what to do without JavaScript.
    const page = await (await send(jar, "/auth/two-factor")).text();
    expect(page).toContain('id="second-step-passkey"');
    expect(page).not.toContain('id="two-factor-code"');

    // Another account's passkey does not finish Ada's sign-in.
    await createUser("eve@example.com", "Eve");
    const eve = new SoftwareAuthenticator();
    const eveJar = (await passwordSignIn(new CookieJar(), "eve@example.com")).jar;
    await registerPasskey(eveJar, eve);
    expect(await passkeyStep(jar, eve)).not.toHaveSessionCookie();
    expect(await sessionOf(jar)).toBeNull();

    const factors = await factorsOfNewSession(async () => {
      const done = await passkeyStep(jar, authenticator);
      expect(done).toHaveRedirect(`${ORIGIN}/account`);
      return done;
    });
    expect(factors).toBe("pwd hwk mfa");
    expect((await sessionOf(jar))?.user.email).toBe("ada@example.com");
    const account = await send(jar, "/account");
    expect(account.status).toBe(200);
    await account.body?.cancel();
  });

  it("an e-mail link, an e-mailed code, a password reset and an OpenID sign-in alone end on the second step, never on a session", async () => {
    const { authenticator } = await adaWithPasskey();
    await mailSenderIdle();
    smtp.sink.clear();
    // The e-mail link and its code (one message carries both).
    const asker = new CookieJar();
    await send(asker, "/auth/signin/email", { body: { csrfToken: await csrf(asker), email: "ada@example.com", callbackUrl: "/account" } });
    const [message] = await smtp.sink.waitFor(1);
    const link = linkIn(message!);
    const code = /code in the browser where you asked: (\d{6})/.exec(message!.text ?? "")![1]!;
    const byCode = await send(asker, "/auth/callback/email", { body: { csrfToken: await csrf(asker), code } });
    expect(byCode).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(await sessionOf(asker)).toBeNull();
    const byLink = new CookieJar();
    await send(byLink, link.pathname + link.search);
    expect(await sessionOf(byLink)).toBeNull();

    // A password reset: no session, and the new password waits for the second factor.
    smtp.sink.clear();
    const resetter = new CookieJar();
    await send(resetter, "/auth/forgot-password", { body: { csrfToken: await csrf(resetter), email: "ada@example.com" } });
    const [reset] = await smtp.sink.waitFor(1);
    const resetLink = linkIn(reset!);
    const resetRes = await send(resetter, "/auth/reset-password", {
      body: { csrfToken: await csrf(resetter), token: resetLink.searchParams.get("token")!, email: "ada@example.com", password: "velvet lantern orbit" },
    });
    expect(resetRes).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(await sessionOf(resetter)).toBeNull();
    // The new password waits for the second factor: the old one still stands (ADR 062).
    const stored = (await testDb().password.findFirstOrThrow({ where: { user: { email: "ada@example.com" } } })).hash;
    expect(await passkeyStep(resetter, authenticator)).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect((await sessionOf(resetter))?.user.email).toBe("ada@example.com");
    expect((await testDb().password.findFirstOrThrow({ where: { user: { email: "ada@example.com" } } })).hash).not.toBe(stored);

    // An OpenID sign-in of an account with a passkey.
    idp.configure();
    const oidc = new CookieJar();
    const created = await signInThroughIdp(oidc, ALICE, { callbackUrl: "/account" });
    expect(created.res).toHaveSessionCookie();
    expect(await registerPasskey(oidc, new SoftwareAuthenticator())).toHaveRedirect(`${ORIGIN}/account`);
    const laptop = new CookieJar();
    const { res } = await signInThroughIdp(laptop, ALICE, { callbackUrl: "/account" });
    expect(res).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(await sessionOf(laptop)).toBeNull();
  });

  it("a one-factor session from before the passkey reaches no page, data request, action or JSON answer; proving the passkey opens them", async () => {
    await createUser();
    const { jar: old } = await passwordSignIn();
    const { jar: older } = await passwordSignIn();
    // The same user adds a passkey from another browser: the old sessions proved one factor only.
    const phone = (await passwordSignIn()).jar;
    const authenticator = new SoftwareAuthenticator();
    expect(await registerPasskey(phone, authenticator)).toHaveRedirect(`${ORIGIN}/account`);
    await testDb().user.updateMany({ data: { role: "admin" } });
    await expectHeldAtSecondFactor(old);

    // The step the gate points at: re-authenticate with the passkey (two factors by itself).
    const options = (await (await send(old, "/auth/webauthn-options/passkey?action=reauthenticate")).json()) as { options: never };
    const proved = await send(old, "/auth/reauth", {
      body: { csrfToken: await csrf(old), provider: "passkey", action: "reauthenticate", data: JSON.stringify(authenticator.authenticate(options.options)), callbackUrl: "/account" },
    });
    expect(proved).toHaveRedirect(`${ORIGIN}/account`);
    const account = await send(old, "/account");
    expect(account.status).toBe(200);
    await account.body?.cancel();

    // Re-authenticating with the password alone is one factor again: the passkey step follows.
    const reauth = await send(older, "/auth/reauth?callbackUrl=%2Faccount", {
      body: { csrfToken: await csrf(older), provider: "credentials", password: PASSWORD, callbackUrl: "/account" },
    });
    expect(reauth).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect((await send(older, "/account")).status).toBe(302);
    expect(await passkeyStep(older, authenticator)).toHaveRedirect(`${ORIGIN}/account`);
    const opened = await send(older, "/account");
    expect(opened.status).toBe(200);
    await opened.body?.cancel();
  });

  it("with passkeys turned off (AUTH_PASSKEYS=false) a passkey left from before is no second factor: the password sign-in is held at the set-up, not at a step it cannot finish", async () => {
    await adaWithPasskey();
    configure({ AUTH_PASSKEYS: "false" });
    const { jar, res } = await passwordSignIn();
    expect(res).toHaveRedirect(`${ORIGIN}/account`);
    const home = await send(jar, "/");
    expect(home.status).toBe(302);
    expect(home.headers.get("Location")).toBe(`${ORIGIN}/account`);
  });

  it("registering the first passkey at the set-up gate opens every page in that session (it proved the passkey); a copy of the old cookie is signed out", async () => {
    await createUser();
    const { jar } = await passwordSignIn();
    const copy = new CookieJar();
    for (const name of jar.names()) copy.set(name, jar.get(name)!);
    expect(await registerPasskey(jar, new SoftwareAuthenticator())).toHaveRedirect(`${ORIGIN}/account`);
    const home = await send(jar, "/");
    expect(home.status).toBe(200);
    await home.body?.cancel();
    // The copy of the one-factor cookie was renewed away: signed out, not upgraded.
    expect(await sessionOf(copy)).toBeNull();
  });
});

describe.each(["jwt", "database"] as const)(`AUTH_ASSURANCE=aal2 counts the session's factors, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    resetRevocations();
    configure({ AUTH_SESSION_STRATEGY: strategy, AUTH_ASSURANCE: "aal2", AUTH_REQUIRE_MFA: undefined });
  });

  it("aal2 (required MFA by default): a password alone is not aal2 for a user with a passkey; the passkey step makes the session two-factor", async () => {
    const { authenticator } = await adaWithPasskey();
    const { jar, res } = await passwordSignIn();
    expect(res).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(await sessionOf(jar)).toBeNull();
    const factors = await factorsOfNewSession(async () => {
      const done = await passkeyStep(jar, authenticator);
      expect(done).toHaveRedirect(`${ORIGIN}/account`);
      return done;
    });
    expect(factors).toBe("pwd hwk mfa");
    const home = await send(jar, "/");
    expect(home.status).toBe(200);
    await home.body?.cancel();
  });
});

describe.each(["jwt", "database"] as const)(`the set-up gate's data requests, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    resetRevocations();
    configure({ AUTH_SESSION_STRATEGY: strategy, AUTH_REQUIRE_MFA: "true", AUTH_ASSURANCE: undefined });
  });

  it("a gated user's /account.data, like the page, carries only the set-up: no sessions, events, address or linked accounts", async () => {
    await createUser();
    const { jar } = await passwordSignIn();
    const sessionIds = (await testDb().session.findMany({ select: { id: true } })).map((r) => r.id);
    const eventIds = (await testDb().authEvent.findMany({ select: { id: true } })).map((r) => r.id);
    expect(sessionIds.length * eventIds.length).toBeGreaterThan(0);
    // React Router's data request for the page's own loader, then the whole page's data and the page.
    for (const path of ["/account.data?_routes=routes%2Faccount", "/account.data", "/account"]) {
      const res = await send(jar, path);
      expect(res.status, path).toBe(200);
      const text = await res.text();
      expect(text, path).toContain("secondFactorSetup");
      // The sessions, the activity and the profile stay out.
      for (const id of [...sessionIds, ...eventIds]) expect(text, path).not.toContain(id);
      if (path.includes("_routes")) expect(text, path).not.toContain("ada@example.com");
    }
  });
});
