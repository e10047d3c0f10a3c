// Passkeys  end to end through the route modules, with a software authenticator
// (tests/support/passkey-authenticator.ts) answering the server's real options: registration only
// while signed in, discoverable sign-in through the shared flow, and every check an attacker would
// probe — a replayed assertion, another origin or RP id, no user verification, a counter going
// backwards, a removed or unknown credential, garbage — refused without a 5xx or a session.
import { beforeEach, describe, expect, it } from "vitest";
import * as account from "../../../app/routes/account.tsx";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as optionsRoute from "../../../app/routes/auth/webauthn-options";
import * as providersRoute from "../../../app/routes/auth/providers";
import * as sessionRoute from "../../../app/routes/auth/session";
import { createUser, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http.ts";
import { SoftwareAuthenticator, type CeremonyOverrides } from "../../support/passkey-authenticator.ts";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";

beforeEach(() => resetDatabase());

async function options(jar: CookieJar, action?: string) {
  const res = await callRoute(optionsRoute.loader, get(`/auth/webauthn-options/passkey${action ? `?action=${action}` : ""}`, { jar }), { provider: "passkey" });
  jar.apply(res);
  return { res, body: (await res.json()) as { action: string; options: any; error?: string } };
}

async function answer(jar: CookieJar, action: string, data: unknown, extra: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/passkey", { csrfToken, action, data: typeof data === "string" ? data : JSON.stringify(data), ...extra }, { jar, headers }),
    { provider: "passkey" },
  );
  jar.apply(res);
  return res;
}

/** Ada, signed in with her password, adds `authenticator` as a passkey. */
async function adaWithPasskey(authenticator = new SoftwareAuthenticator()) {
  const user = await createUser();
  const { jar } = await signIn();
  const { body } = await options(jar, "register");
  const res = await answer(jar, "register", authenticator.register(body.options));
  expect(res).toHaveRedirect("/account");
  return { user, jar, authenticator };
}

/** A fresh, signed-out browser answering authentication options with `authenticator`. */
async function passkeySignIn(authenticator: SoftwareAuthenticator, o: CeremonyOverrides = {}, jar = new CookieJar(), headers: Record<string, string> = {}) {
  const { body } = await options(jar);
  expect(body.action).toBe("authenticate");
  const res = await answer(jar, "authenticate", authenticator.authenticate(body.options, o), { callbackUrl: "/account" }, headers);
  return { res, jar };
}

async function sessionOf(jar: CookieJar) {
  return (await (await callRoute(sessionRoute.loader, get("/auth/session", { jar }))).json()) as { user: { email: string } } | null;
}

describe(`passkeys (${dbLabel})`, () => {
  it("lists passkey as a webauthn provider, and AUTH_PASSKEYS=false turns it off", async () => {
    const body = await (await callRoute(providersRoute.loader, get("/auth/providers"))).json();
    expect(body.passkey).toEqual({
      id: "passkey",
      name: "Passkey",
      type: "webauthn",
      signinUrl: `${ORIGIN}/auth/signin/passkey`,
      callbackUrl: `${ORIGIN}/auth/callback/passkey`,
    });
    const undo = withEnv({ AUTH_PASSKEYS: "false" });
    try {
      const off = await (await callRoute(providersRoute.loader, get("/auth/providers"))).json();
      expect(off.passkey).toBeUndefined();
      expect((await callRoute(optionsRoute.loader, get("/auth/webauthn-options/passkey"), { provider: "passkey" })).status).toBe(400);
    } finally {
      undo();
    }
  });

  it("answers options as Auth.js does: discoverable, user verification required, RP id = the origin's host, a sealed challenge cookie", async () => {
    const jar = new CookieJar();
    const { res, body } = await options(jar);
    expect(res.status).toBe(200);
    expect(body.action).toBe("authenticate");
    expect(body.options).toMatchObject({ rpId: "localhost", userVerification: "required" });
    expect(body.options.allowCredentials ?? []).toEqual([]);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("authjs.challenge="))!;
    expect(cookie).toMatch(/Max-Age=900/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).not.toContain(body.options.challenge);
    const nonsense = await options(new CookieJar(), "nonsense");
    expect(nonsense.res.status).toBe(400);
    expect(nonsense.body).toEqual({ error: "Invalid action" });
    // Without an action, as Auth.js: a signed-out browser authenticates (above); a signed-in one must say which.
    await createUser();
    const { jar: signedIn } = await signIn();
    const undecided = await options(signedIn);
    expect(undecided.res.status).toBe(400);
    expect(undecided.body).toEqual({ error: "Invalid request" });
    expect((await options(signedIn, "authenticate")).body.action).toBe("authenticate");
    expect((await options(signedIn, "register")).body.action).toBe("register");
  });

  it("refuses registration to a signed-out browser: options 401, and a posted answer creates nothing", async () => {
    const jar = new CookieJar();
    const { res, body } = await options(jar, "register");
    expect(res.status).toBe(401);
    expect(body.error).toBeTruthy();
    // An answer to options obtained while signed in, posted after signing out, still creates nothing.
    await createUser();
    const { jar: signedIn } = await signIn();
    const reg = await options(signedIn, "register");
    signedIn.delete("authjs.session-token");
    const refused = await answer(signedIn, "register", new SoftwareAuthenticator().register(reg.body.options));
    expect(refused).toHaveErrorRedirect("SessionRequired");
    expect(await testDb().passkey.count()).toBe(0);
    expect(await testDb().user.count()).toBe(1);
  });

  it("registers a passkey for the signed-in user and lands on /account (JSON clients get {url})", async () => {
    const { user, authenticator } = await adaWithPasskey();
    const rows = await testDb().passkey.findMany();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ userId: user.id, credentialId: authenticator.id, deviceType: "multiDevice", backedUp: true, name: "Passkey" });
    expect(rows[0]!.transports).toBe("internal,hybrid");
    expect(await testDb().authEvent.count({ where: { type: "passkey-added", userId: user.id } })).toBe(1);

    // A second one, from a JSON client, to an explicit callbackUrl.
    const { jar } = await signIn();
    const { body } = await options(jar, "register");
    expect(body.options.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([authenticator.id]);
    expect(body.options.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
    const res = await answer(jar, "register", new SoftwareAuthenticator().register(body.options), { callbackUrl: "/welcome" }, { "X-Auth-Return-Redirect": "1" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: `${ORIGIN}/welcome` });
    expect((await testDb().passkey.findMany({ orderBy: { createdAt: "asc" } })).map((p) => p.name)).toEqual(["Passkey", "Passkey 2"]);
  });

  it("a credential registered already: to this user it is a no-op that lands on /account (a double-posted answer); to another user it is refused; nothing is written", async () => {
    const { jar, authenticator } = await adaWithPasskey();
    const again = await options(jar, "register");
    expect(await answer(jar, "register", authenticator.register(again.body.options))).toHaveRedirect("/account");
    await createUser("bob@example.com", "Bob");
    const { jar: bob } = await signIn(new CookieJar(), "bob@example.com");
    const bobs = await options(bob, "register");
    expect(await answer(bob, "register", authenticator.register(bobs.body.options))).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(await testDb().passkey.count()).toBe(1);
    // Nothing half-written: neither answer spent its challenge.
    expect(await testDb().passkeyChallenge.count()).toBe(1);
  });

  it("signs in with the passkey alone: no address, session method passkey, counter and last use recorded", async () => {
    const { user, authenticator } = await adaWithPasskey();
    const { res, jar } = await passkeySignIn(authenticator);
    expect(res).toHaveRedirect("/account");
    expect(res).toHaveSessionCookie();
    expect((await sessionOf(jar))?.user.email).toBe("ada@example.com");
    const row = await testDb().passkey.findFirstOrThrow();
    expect(Number(row.counter)).toBe(1);
    expect(row.lastUsedAt).not.toBeNull();
    expect(await testDb().session.count({ where: { userId: user.id, method: "passkey" } })).toBe(1);
    expect(await testDb().authEvent.count({ where: { type: "signin", userId: user.id, detail: { contains: '"provider":"passkey"' } } })).toBe(1);

    // The owner signing in again and again, in two tabs at once: each tab's challenge is its own.
    const browser = new CookieJar();
    const tab1 = await options(browser);
    const tab2 = await options(browser);
    const second = await answer(browser, "authenticate", authenticator.authenticate(tab2.body.options));
    expect(second).toHaveSessionCookie();
    const first = await answer(browser, "authenticate", authenticator.authenticate(tab1.body.options));
    expect(first).toHaveSessionCookie();
    expect(Number((await testDb().passkey.findFirstOrThrow()).counter)).toBe(3);
  });

  it("signs in with database sessions too, and the session lists its method", async () => {
    const undo = withEnv({ AUTH_SESSION_STRATEGY: "database" });
    try {
      const { user, authenticator } = await adaWithPasskey();
      const { res, jar } = await passkeySignIn(authenticator);
      expect(res).toHaveSessionCookie();
      expect((await sessionOf(jar))?.user.email).toBe("ada@example.com");
      expect(await testDb().session.count({ where: { userId: user.id, kind: "database", method: "passkey" } })).toBe(1);
    } finally {
      undo();
    }
  });

  it.each(["jwt", "database"] as const)("a session signed in with a passkey ends when that passkey is removed (%s sessions)", async (strategy) => {
    const undo = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    try {
      const { user, authenticator } = await adaWithPasskey();
      const { jar } = await passkeySignIn(authenticator);
      const passkey = await testDb().passkey.findFirstOrThrow();
      expect((await testDb().session.findFirstOrThrow({ where: { userId: user.id, method: "passkey" } })).credentialRef).toBe(`passkey:${passkey.id}`);
      // The owner, signed in with the password elsewhere, removes it.
      const { jar: laptop } = await signIn();
      const csrfToken = await fetchCsrf(laptop);
      const res = await callRoute(account.action, post("/account", { csrfToken, intent: "passkey-remove", passkeyId: passkey.id }, { jar: laptop }));
      expect(res).toHaveRedirect("/account?updated=passkey-removed#passkeys");
      expect(await sessionOf(jar)).toBeNull();
      expect((await sessionOf(laptop))?.user.email).toBe("ada@example.com");
    } finally {
      undo();
    }
  });

  it("lets one of 10 concurrent posts of the same answer through, never more", async () => {
    const { user, authenticator } = await adaWithPasskey(new SoftwareAuthenticator({ counting: false }));
    const jar = new CookieJar();
    const { body } = await options(jar);
    const data = JSON.stringify(authenticator.authenticate(body.options));
    const csrfToken = await fetchCsrf(jar);
    const before = await testDb().session.count({ where: { userId: user.id, method: "passkey" } });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        callRoute(callbackRoute.action, post("/auth/callback/passkey", { csrfToken, action: "authenticate", data }, { jar }), { provider: "passkey" }),
      ),
    );
    expect(answers.every((r) => r.status < 500)).toBe(true);
    expect(answers.filter((r) => r.headers.getSetCookie().some((c) => /^authjs\.session-token=[^;]+/.test(c) && !/Max-Age=0/.test(c)))).toHaveLength(1);
    expect(await testDb().session.count({ where: { userId: user.id, method: "passkey" } })).toBe(before + 1);
    // Spent: the registration's challenge and this answer's, once.
    expect(await testDb().passkeyChallenge.count()).toBe(2);
  });

  it("JSON-mode sign-in (next-auth/webauthn's request) gets {url} and the session cookie", async () => {
    const { authenticator } = await adaWithPasskey();
    const jar = new CookieJar();
    const { body } = await options(jar, "authenticate");
    const res = await answer(jar, "authenticate", authenticator.authenticate(body.options), { callbackUrl: `${ORIGIN}/account` }, { "X-Auth-Return-Redirect": "1" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: `${ORIGIN}/account` });
    expect(res).toHaveSessionCookie();
  });

  it("refuses a replayed assertion: the same cookie and the same answer sign in once", async () => {
    const { authenticator } = await adaWithPasskey(new SoftwareAuthenticator({ counting: false }));
    const jar = new CookieJar();
    const { body } = await options(jar);
    const cookie = jar.get("authjs.challenge")!;
    const data = authenticator.authenticate(body.options);
    expect(await answer(jar, "authenticate", data)).toHaveSessionCookie();
    // The browser's cookie no longer holds that challenge…
    const again = await answer(jar, "authenticate", data);
    expect(again).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(again).not.toHaveSessionCookie();
    // …and an attacker who kept the old cookie is refused by the database record.
    const attacker = new CookieJar().set("authjs.challenge", cookie);
    const replay = await answer(attacker, "authenticate", data);
    expect(replay).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(replay).not.toHaveSessionCookie();
  });

  it.each([
    ["another origin", { origin: "https://evil.example" }],
    ["another RP id", { rpId: "evil.example" }],
    ["no user verification", { uv: false }],
  ] as const)("refuses an assertion with %s", async (_, overrides) => {
    const { authenticator } = await adaWithPasskey();
    const { res } = await passkeySignIn(authenticator, overrides);
    expect(res).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(res).not.toHaveSessionCookie();
    expect((await testDb().passkey.findFirstOrThrow()).lastUsedAt).toBeNull();
    // The owner's activity shows the refused attempt; the answer never names the reason.
    expect(await testDb().authEvent.count({ where: { type: "signin-failed", detail: { contains: '"provider":"passkey"' } } })).toBe(1);
    expect(new URL(res.headers.get("Location")!).search).toBe("?error=WebAuthnVerificationError");
  });

  it.each([
    ["another origin", { origin: "https://evil.example" }],
    ["another RP id", { rpId: "evil.example" }],
    ["no user verification", { uv: false }],
  ] as const)("refuses a registration with %s", async (_, overrides) => {
    await createUser();
    const { jar } = await signIn();
    const { body } = await options(jar, "register");
    expect(await answer(jar, "register", new SoftwareAuthenticator().register(body.options, overrides))).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(await testDb().passkey.count()).toBe(0);
  });

  it("refuses a counter that goes backwards, and accepts a counter that stays 0 (both zero)", async () => {
    const { authenticator } = await adaWithPasskey();
    expect((await passkeySignIn(authenticator, { counter: 5 })).res).toHaveSessionCookie();
    const cloned = await passkeySignIn(authenticator, { counter: 3 });
    expect(cloned.res).toHaveErrorRedirect("WebAuthnVerificationError");
    expect((await passkeySignIn(authenticator, { counter: 5 })).res).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(Number((await testDb().passkey.findFirstOrThrow()).counter)).toBe(5);
    expect((await passkeySignIn(authenticator, { counter: 6 })).res).toHaveSessionCookie();

    await resetDatabase();
    const { authenticator: counterless } = await adaWithPasskey(new SoftwareAuthenticator({ counting: false }));
    expect((await passkeySignIn(counterless)).res).toHaveSessionCookie();
    expect((await passkeySignIn(counterless)).res).toHaveSessionCookie();
  });

  it("gives an unknown credential the same answer as a wrong signature, and a removed passkey no way in", async () => {
    const { jar, authenticator } = await adaWithPasskey();
    const unknown = await passkeySignIn(new SoftwareAuthenticator());
    const wrong = await passkeySignIn(authenticator, { rpId: "evil.example" });
    expect(unknown.res.status).toBe(wrong.res.status);
    expect(unknown.res.headers.get("Location")).toBe(wrong.res.headers.get("Location"));
    expect(unknown.res.headers.getSetCookie().map((c) => c.split("=")[0]).sort()).toEqual(wrong.res.headers.getSetCookie().map((c) => c.split("=")[0]).sort());

    const passkey = await testDb().passkey.findFirstOrThrow();
    const csrfToken = await fetchCsrf(jar);
    const removed = await callRoute(account.action, post("/account", { csrfToken, intent: "passkey-remove", passkeyId: passkey.id }, { jar }));
    expect(removed).toHaveRedirect("/account?updated=passkey-removed#passkeys");
    expect(await testDb().authEvent.count({ where: { type: "passkey-removed" } })).toBe(1);
    const after = await passkeySignIn(authenticator);
    expect(after.res).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(after.res).not.toHaveSessionCookie();
  });

  it("failed passkey answers never lock the owner out", async () => {
    const { authenticator } = await adaWithPasskey();
    // The failures come from another client: past its own budget that client is refused
    // (passkey-limits.test.ts), which never touches the owner's.
    const attacker = { "X-Vestibule-Remote-Addr": "203.0.113.66" };
    for (let i = 0; i < 25; i++) {
      expect((await passkeySignIn(new SoftwareAuthenticator(), {}, new CookieJar(), attacker)).res).not.toHaveSessionCookie();
      expect((await passkeySignIn(authenticator, { uv: false }, new CookieJar(), attacker)).res).not.toHaveSessionCookie();
    }
    expect((await passkeySignIn(authenticator)).res).toHaveSessionCookie();
  });

  it("does not take a register challenge for a sign-in, nor one user's register challenge for another", async () => {
    const { authenticator } = await adaWithPasskey();
    const jar = new CookieJar();
    await createUser("bob@example.com", "Bob");
    await signIn(jar);
    const reg = await options(jar, "register");
    // An assertion signed over the register challenge.
    const crossed = await answer(jar, "authenticate", authenticator.authenticate({ challenge: reg.body.options.challenge, rpId: "localhost" }));
    expect(crossed).toHaveErrorRedirect("WebAuthnVerificationError");
    // Ada's register challenge, answered after Bob signed in in the same browser.
    const reg2 = await options(jar, "register");
    await signIn(jar, "bob@example.com");
    const res = await answer(jar, "register", new SoftwareAuthenticator().register(reg2.body.options));
    expect(res).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(await testDb().passkey.count()).toBe(1);
  });

  it("never answers garbage with a 5xx, and signs nobody in", async () => {
    const { authenticator } = await adaWithPasskey();
    const jar = new CookieJar();
    const { body } = await options(jar);
    const good = authenticator.authenticate(body.options);
    const garbage: unknown[] = [
      "",
      "null",
      "[]",
      "{}",
      "not json",
      "{\"id\":",
      JSON.stringify({ ...good, id: 42 }),
      JSON.stringify({ ...good, type: "password" }),
      JSON.stringify({ ...good, response: { ...good.response, authenticatorData: "%%%" } }),
      JSON.stringify({ ...good, response: { ...good.response, authenticatorData: "AAAA" } }),
      JSON.stringify({ ...good, response: { ...good.response, clientDataJSON: Buffer.from("{}").toString("base64url") } }),
      JSON.stringify({ ...good, response: { ...good.response, signature: "AAAA" } }),
      JSON.stringify({ ...good, response: { ...good.response, userHandle: "AAAA" } }),
      JSON.stringify({ ...good, response: { ...good.response, attestationObject: "oA" } }),
      "[".repeat(5000),
    ];
    for (const action of ["authenticate", "register", "", "delete"]) {
      for (const data of garbage) {
        const res = await answer(jar, action, data as string);
        expect(res.status, `${action} ${String(data).slice(0, 40)}`).toBeLessThan(500);
        expect(res).not.toHaveSessionCookie();
      }
    }
    // No data at all, and a JSON body whose data is an object.
    const csrfToken = await fetchCsrf(jar);
    const bare = await callRoute(callbackRoute.action, post("/auth/callback/passkey", { csrfToken, action: "authenticate" }, { jar }), { provider: "passkey" });
    expect(bare.status).toBeLessThan(500);
    const object = await callRoute(callbackRoute.action, post("/auth/callback/passkey", { csrfToken, action: "authenticate", data: { id: 1 } }, { jar, json: true }), { provider: "passkey" });
    expect(object.status).toBeLessThan(500);
    // Without the CSRF token: refused before anything is read.
    const noCsrf = await callRoute(callbackRoute.action, post("/auth/callback/passkey", { action: "authenticate", data: JSON.stringify(good) }, { jar }), { provider: "passkey" });
    expect(noCsrf).toHaveErrorRedirect("MissingCSRF");
    // A mangled challenge cookie reads as no challenge.
    jar.set("authjs.challenge", "garbage");
    expect((await answer(jar, "authenticate", good)).status).toBeLessThan(500);
    expect(await testDb().passkey.count()).toBe(1);
  });
});

describe(`/account passkey forms (${dbLabel})`, () => {
  async function accountPost(jar: CookieJar, body: Record<string, string>) {
    const csrfToken = await fetchCsrf(jar);
    return callRoute(account.action, post("/account", { csrfToken, ...body }, { jar }));
  }

  it("lists the passkeys with name, created, last used, device type and backup state", async () => {
    const { jar, authenticator } = await adaWithPasskey();
    await passkeySignIn(authenticator);
    const res = await callRoute(account.loader, get("/account", { jar }));
    const page = await res.json();
    expect(page.passkeys.enabled).toBe(true);
    expect(page.passkeys.passkeys).toEqual([
      { id: expect.any(String), name: "Passkey", createdAt: expect.any(String), lastUsedAt: expect.any(String), deviceType: "multiDevice", backedUp: true },
    ]);
    expect(page.passkeys.offer).toBe(false);
  });

  it("offers a passkey right after a sign-in to a user who has none", async () => {
    await createUser();
    const { jar } = await signIn();
    const page = await (await callRoute(account.loader, get("/account", { jar }))).json();
    expect(page.passkeys.offer).toBe(true);
    expect(page.passkeys.passkeys).toEqual([]);
  });

  it("renames a passkey; refuses an empty or overlong name (400), another user's passkey (404) and a malformed id (400)", async () => {
    const { jar } = await adaWithPasskey();
    const passkey = await testDb().passkey.findFirstOrThrow();
    expect(await accountPost(jar, { intent: "passkey-rename", passkeyId: passkey.id, name: "  Work laptop " })).toHaveRedirect("/account?updated=passkey-renamed#passkeys");
    expect((await testDb().passkey.findFirstOrThrow()).name).toBe("Work laptop");

    const empty = await accountPost(jar, { intent: "passkey-rename", passkeyId: passkey.id, name: "   " });
    expect(empty.status).toBe(400);
    expect((await empty.json()).fieldErrors.passkeyName).toMatch(/name/i);
    expect((await accountPost(jar, { intent: "passkey-rename", passkeyId: passkey.id, name: "x".repeat(61) })).status).toBe(400);
    expect((await accountPost(jar, { intent: "passkey-rename", passkeyId: passkey.id, name: "a\u0000b" })).status).toBe(400);
    expect((await accountPost(jar, { intent: "passkey-rename", passkeyId: "../x", name: "x" })).status).toBe(400);
    expect((await testDb().passkey.findFirstOrThrow()).name).toBe("Work laptop");

    const bob = await createUser("bob@example.com", "Bob");
    const bobJar = (await signIn(new CookieJar(), "bob@example.com")).jar;
    expect((await accountPost(bobJar, { intent: "passkey-rename", passkeyId: passkey.id, name: "mine" })).status).toBe(404);
    expect((await accountPost(bobJar, { intent: "passkey-remove", passkeyId: passkey.id })).status).toBe(404);
    expect(bob.id).not.toBe(passkey.userId);
    expect(await testDb().passkey.count()).toBe(1);
  });

  it("refuses to remove the last way to sign in; removes a passkey while another way remains", async () => {
    const { user, jar, authenticator } = await adaWithPasskey();
    // Only the passkey left: no password, no address (so no e-mail link).
    await testDb().password.deleteMany({ where: { userId: user.id } });
    await testDb().user.update({ where: { id: user.id }, data: { email: null } });
    const passkey = await testDb().passkey.findFirstOrThrow();
    const refused = await accountPost(jar, { intent: "passkey-remove", passkeyId: passkey.id });
    expect(refused.status).toBe(409);
    expect(await testDb().passkey.count()).toBe(1);
    expect((await passkeySignIn(authenticator)).res).toHaveSessionCookie();

    // A second passkey: now either may go, but never both (removals race on the same rule).
    const reg = await options(jar, "register");
    await answer(jar, "register", new SoftwareAuthenticator().register(reg.body.options));
    const ids = (await testDb().passkey.findMany()).map((p) => p.id);
    const answers = await Promise.all(ids.flatMap((id) => [id, id].map((passkeyId) => accountPost(jar, { intent: "passkey-remove", passkeyId }))));
    expect(answers.every((r) => r.status < 500)).toBe(true);
    expect(await testDb().passkey.count()).toBe(1);
  });
});

describe(`adding a passkey twice (${dbLabel}, issue 32)`, () => {
  const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

  it("the same answer posted twice (a double click on a form that was sent twice) stores one passkey, and both land on /account", async () => {
    await createUser();
    const { jar } = await signIn();
    const { body } = await options(jar, "register");
    const data = new SoftwareAuthenticator().register(body.options);
    // The second post carries the cookie as it was before the first answer rewrote it.
    const before = jar.header();
    expect(await answer(jar, "register", data)).toHaveRedirect("/account");
    const twin = new CookieJar(Object.fromEntries(before.split("; ").map((c) => [c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1)])));
    expect(await answer(twin, "register", data)).toHaveRedirect("/account");
    expect(await testDb().passkey.count()).toBe(1);
    expect(await testDb().authEvent.count({ where: { type: "passkey-added" } })).toBe(1);
  });

  it("default names are in the page's language and never repeat: 'Passkey (Firefox on Linux)', then 'Passkey 2 (Firefox on Linux)', in en/fr/de/ar", async () => {
    for (const locale of ["en", "fr", "de", "ar"] as const) {
      await resetDatabase();
      await createUser();
      const { jar } = await signIn();
      for (let i = 0; i < 2; i++) {
        const { body } = await runWithLocale(locale, () => options(jar, "register"));
        const res = await runWithLocale(locale, () => answer(jar, "register", new SoftwareAuthenticator().register(body.options), {}, { "User-Agent": FIREFOX }));
        expect(res).toHaveRedirect("/account");
      }
      const names = (await testDb().passkey.findMany({ orderBy: { createdAt: "asc" } })).map((p) => p.name);
      const device = runWithLocale(locale, () => t("device.browserOn", { browser: "Firefox", os: "Linux" }));
      expect(names).toEqual([
        runWithLocale(locale, () => t("passkey.defaultName", { device })),
        runWithLocale(locale, () => t("passkey.defaultNameNumbered", { device, n: 2 })),
      ]);
      expect(new Set(names).size).toBe(2);
    }
  });
});
