// Passkeys probed as an outside attacker would (security review): each test reproduces a finding
// through the real routes, and holds the honest user's case next to it so a fix cannot overreach.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as account from "../../../app/routes/account.tsx";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as optionsRoute from "../../../app/routes/auth/webauthn-options";
import { createUser, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { SoftwareAuthenticator } from "../../support/passkey-authenticator.ts";
import { codeAt, enrolled, firstFactor, PENDING, submitCode } from "../two-factor/helpers.ts";

beforeEach(() => resetDatabase());
afterEach(() => vi.useRealTimers());

/** A TOTP user's session that passed the code: only such a session adds a passkey (ADR 045). */
async function secondFactorSession(): Promise<CookieJar> {
  const { secret } = await enrolled();
  const jar = new CookieJar();
  await firstFactor(jar);
  await submitCode(jar, codeAt(secret));
  return jar;
}

async function options(jar: CookieJar, action?: string) {
  const res = await callRoute(optionsRoute.loader, get(`/auth/webauthn-options/passkey${action ? `?action=${action}` : ""}`, { jar }), { provider: "passkey" });
  jar.apply(res);
  return (await res.json()) as { action: string; options: any };
}

async function answer(jar: CookieJar, action: string, data: unknown) {
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(callbackRoute.action, post("/auth/callback/passkey", { csrfToken, action, data: JSON.stringify(data) }, { jar }), { provider: "passkey" });
  jar.apply(res);
  return res;
}

async function accountPost(jar: CookieJar, body: Record<string, string>) {
  const csrfToken = await fetchCsrf(jar);
  return callRoute(account.action, post("/account", { csrfToken, ...body }, { jar }));
}

/** Ada, signed in with her password, registers `registration` (an authenticator's answer, possibly altered). */
async function adaRegisters(alter: (r: ReturnType<SoftwareAuthenticator["register"]>) => unknown = (r) => r) {
  await createUser();
  const { jar } = await signIn();
  const body = await options(jar, "register");
  const res = await answer(jar, "register", alter(new SoftwareAuthenticator().register(body.options)));
  return { jar, res };
}

/** Ada, signed in with her password, registers `authenticator` untouched. */
async function adaRegistersWith(authenticator: SoftwareAuthenticator) {
  await createUser();
  const { jar } = await signIn();
  const res = await answer(jar, "register", authenticator.register((await options(jar, "register")).options));
  expect(res).toHaveRedirect("/account");
  return { jar };
}

describe(`passkeys under attack (${dbLabel})`, () => {
  it("stores only the transports WebAuthn defines: markup, commas and control characters from the browser are dropped", async () => {
    const { jar, res } = await adaRegisters((r) => ({
      ...r,
      response: { ...r.response, transports: ["usb", "<img src=x onerror=alert(1)>", "nfc,ble", "hybrid\u0007", "internal", "usb"] },
    }));
    expect(res).toHaveRedirect("/account");
    expect((await testDb().passkey.findFirstOrThrow()).transports).toBe("usb,internal");
    // The next registration's options echo only those back (excludeCredentials).
    const next = await options(jar, "register");
    expect(next.options.excludeCredentials[0].transports).toEqual(["usb", "internal"]);
  });

  it("an honest authenticator's transports are kept as sent, and none at all stays none", async () => {
    expect((await adaRegisters()).res).toHaveRedirect("/account");
    expect((await testDb().passkey.findFirstOrThrow()).transports).toBe("internal,hybrid");
    await resetDatabase();
    const { res } = await adaRegisters((r) => ({ ...r, response: { ...r.response, transports: ["smart-card-2030"] } }));
    expect(res).toHaveRedirect("/account");
    expect((await testDb().passkey.findFirstOrThrow()).transports).toBeNull();
  });

  it("refuses a passkey name with C1 control characters, bidirectional overrides or line separators; keeps emoji and accents", async () => {
    const { jar } = await adaRegisters();
    const passkey = await testDb().passkey.findFirstOrThrow();
    for (const name of ["Work\u0085laptop", "Invoice\u202Efdp.exe", "a\u2066b\u2069", "one\u2028two", "mark\u200Fx", "tab\u009Bx"]) {
      const res = await accountPost(jar, { intent: "passkey-rename", passkeyId: passkey.id, name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect((await res.json()).fieldErrors.passkeyName).toMatch(/control characters/);
    }
    expect((await testDb().passkey.findFirstOrThrow()).name).toBe("Passkey");
    // Honest names: an emoji family (joined by U+200D), accents, CJK.
    for (const name of ["👨‍👩‍👧 Family iPad", "Téléphone de Zoë", "仕事のノートPC"]) {
      expect(await accountPost(jar, { intent: "passkey-rename", passkeyId: passkey.id, name })).toHaveRedirect("/account?updated=passkey-renamed#passkeys");
      expect((await testDb().passkey.findFirstOrThrow()).name).toBe(name);
    }
  });

  it("AUTH_PASSKEYS=false closes every passkey endpoint: options, both callback actions, and a registered passkey signs nobody in", async () => {
    const authenticator = new SoftwareAuthenticator();
    await createUser();
    const { jar } = await signIn();
    const registration = authenticator.register((await options(jar, "register")).options);
    expect(await answer(jar, "register", registration)).toHaveRedirect("/account");
    const visitor = new CookieJar();
    const assertion = authenticator.authenticate((await options(visitor)).options);
    const undo = withEnv({ AUTH_PASSKEYS: "false" });
    try {
      for (const action of ["authenticate", "register"]) {
        expect((await callRoute(optionsRoute.loader, get(`/auth/webauthn-options/passkey?action=${action}`, { jar }), { provider: "passkey" })).status).toBe(400);
      }
      const signInAttempt = await answer(visitor, "authenticate", assertion);
      expect(signInAttempt.status).toBe(400);
      expect(signInAttempt).not.toHaveSessionCookie();
      expect((await answer(jar, "register", new SoftwareAuthenticator().register({ challenge: "AAAA", rp: { id: "localhost" }, user: { id: "x" } }))).status).toBe(400);
    } finally {
      undo();
    }
    expect(await testDb().passkey.count()).toBe(1);
    // Turned back on, the same (unused) assertion still signs in once: nothing was spent while off.
    expect(await answer(visitor, "authenticate", assertion)).toHaveSessionCookie();
  });

  it("refuses an answer from another site's page even with a valid CSRF token (Origin), and signs nobody in", async () => {
    const authenticator = new SoftwareAuthenticator();
    await adaRegistersWith(authenticator);
    const jar = new CookieJar();
    const assertion = authenticator.authenticate((await options(jar)).options);
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(
      callbackRoute.action,
      post("/auth/callback/passkey", { csrfToken, action: "authenticate", data: JSON.stringify(assertion) }, { jar, headers: { Origin: "https://evil.example" } }),
      { provider: "passkey" },
    );
    expect(res).toHaveErrorRedirect("MissingCSRF");
    expect(res).not.toHaveSessionCookie();
    // The same answer from our own page still works: nothing was spent.
    expect(await answer(jar, "authenticate", assertion)).toHaveSessionCookie();
  });

  it("refuses attestation formats we did not ask for, without a 5xx and without storing anything", async () => {
    await createUser();
    const { jar } = await signIn();
    for (const fmt of ["packed", "fido-u2f", "tpm", "android-key", "android-safetynet", "apple", "made-up"]) {
      const body = await options(jar, "register");
      const res = await answer(jar, "register", new SoftwareAuthenticator().register(body.options, { fmt }));
      expect(res, fmt).toHaveErrorRedirect("WebAuthnVerificationError");
    }
    expect(await testDb().passkey.count()).toBe(0);
  });

  it("refuses an enormous answer at the body limit (413), never a 5xx", async () => {
    const jar = new CookieJar();
    await options(jar);
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(
      callbackRoute.action,
      post("/auth/callback/passkey", { csrfToken, action: "authenticate", data: "A".repeat(70_000) }, { jar }),
      { provider: "passkey" },
    );
    expect(res.status).toBeLessThan(500);
    expect(res).not.toHaveSessionCookie();
  });

  it("honest: two tabs, the autofill request and the button, answered in any order, each sign in; two passkeys both reach the same account", async () => {
    const first = new SoftwareAuthenticator();
    const second = new SoftwareAuthenticator();
    const { jar: owner } = await adaRegistersWith(first);
    expect(await answer(owner, "register", second.register((await options(owner, "register")).options))).toHaveRedirect("/account");
    expect(await testDb().passkey.count()).toBe(2);

    const jar = new CookieJar();
    const autofill = (await options(jar)).options;
    const tab1 = (await options(jar)).options;
    const tab2 = (await options(jar)).options;
    for (const [authenticator, o] of [[second, tab2], [first, autofill], [second, tab1]] as const) {
      const res = await answer(jar, "authenticate", authenticator.authenticate(o));
      expect(res).toHaveSessionCookie();
    }
    const session = await (await callRoute((await import("../../../app/routes/auth/session")).loader, get("/auth/session", { jar }))).json();
    expect(session.user.email).toBe("ada@example.com");
  });

  it("a TOTP user's passkey sign-in skips the code only with user verification: without UV no session and no pending sign-in", async () => {
    await createUser();
    const jar = await secondFactorSession();
    const authenticator = new SoftwareAuthenticator();
    // Registration without UV is refused too, so no passkey that never verified its user exists.
    expect(await answer(jar, "register", authenticator.register((await options(jar, "register")).options, { uv: false }))).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(await testDb().passkey.count()).toBe(0);
    expect(await answer(jar, "register", authenticator.register((await options(jar, "register")).options))).toHaveRedirect("/account");

    const attacker = new CookieJar();
    const noUv = await answer(attacker, "authenticate", authenticator.authenticate((await options(attacker)).options, { uv: false }));
    expect(noUv).toHaveErrorRedirect("WebAuthnVerificationError");
    expect(noUv).not.toHaveSessionCookie();
    expect(noUv.headers.getSetCookie().some((c) => c.startsWith(`${PENDING}=`) && !/Max-Age=0/.test(c))).toBe(false);

    const owner = new CookieJar();
    const withUv = await answer(owner, "authenticate", authenticator.authenticate((await options(owner)).options));
    expect(withUv).toHaveSessionCookie();
    expect(withUv.headers.get("Location")).not.toMatch(/two-factor/);
  });

  it("two passkeys as the only ways in, removed concurrently from two tabs: exactly one stays", async () => {
    const { jar } = await adaRegistersWith(new SoftwareAuthenticator());
    expect(await answer(jar, "register", new SoftwareAuthenticator().register((await options(jar, "register")).options))).toHaveRedirect("/account");
    const user = await testDb().user.findFirstOrThrow();
    // No address and no password left: the passkeys are Ada's only ways in.
    await testDb().password.deleteMany({ where: { userId: user.id } });
    await testDb().user.update({ where: { id: user.id }, data: { email: null } });
    const ids = (await testDb().passkey.findMany()).map((p) => p.id);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => accountPost(jar, { intent: "passkey-remove", passkeyId: ids[i % 2]! })));
    expect(await testDb().passkey.count()).toBe(1);
    expect(answers.filter((r) => r.status === 302)).toHaveLength(1);
    expect(answers.map((r) => r.status).filter((s) => s !== 302 && s !== 409 && s !== 404)).toEqual([]);
  });

  it("a session cookie taken from the owner's browser cannot add a passkey (a lasting way in that skips the second factor): registration needs a sign-in from the last 10 minutes", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: new Date() });
    await createUser();
    const jar = await secondFactorSession();
    const stolen = jar.get("authjs.session-token")!;
    vi.setSystemTime(new Date(Date.now() + 11 * 60 * 1000));
    const thief = new CookieJar({ "authjs.session-token": stolen });
    const refused = await callRoute(optionsRoute.loader, get("/auth/webauthn-options/passkey?action=register", { jar: thief }), { provider: "passkey" });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: "Sign in again to add a passkey." });
    // Nor with a register challenge minted while the session was fresh.
    const early = new CookieJar({ "authjs.session-token": stolen });
    vi.setSystemTime(new Date(Date.now() - 2 * 60 * 1000));
    const { options: fresh } = await options(early, "register");
    vi.setSystemTime(new Date(Date.now() + 2 * 60 * 1000));
    const late = await answer(early, "register", new SoftwareAuthenticator().register(fresh));
    expect(late).toHaveErrorRedirect("SessionRequired");
    expect(await testDb().passkey.count()).toBe(0);
  });

  it("honest: the owner on /account long after signing in is sent to sign in again, and then adds the passkey", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: new Date() });
    await createUser();
    const { jar } = await signIn();
    const page = async () => (await (await callRoute(account.loader, get("/account", { jar }))).json()).passkeys;
    expect(await page()).toMatchObject({ offer: true, signInAgain: false });
    vi.setSystemTime(new Date(Date.now() + 11 * 60 * 1000));
    expect(await page()).toMatchObject({ offer: false, signInAgain: true });
    await signIn(jar);
    expect(await page()).toMatchObject({ offer: true, signInAgain: false });
    expect(await answer(jar, "register", new SoftwareAuthenticator().register((await options(jar, "register")).options))).toHaveRedirect("/account");
  });

  it("the challenge cookie keeps the newest 5 and stays small: a sixth and seventh request evict the oldest, which then sign nobody in", async () => {
    const authenticator = new SoftwareAuthenticator();
    await adaRegistersWith(authenticator);
    const jar = new CookieJar();
    const issued = [];
    for (let i = 0; i < 7; i++) issued.push((await options(jar)).options);
    expect(jar.get("authjs.challenge")!.length).toBeLessThan(2048);
    for (const evicted of issued.slice(0, 2)) {
      const res = await answer(jar, "authenticate", authenticator.authenticate(evicted));
      expect(res).toHaveErrorRedirect("WebAuthnVerificationError");
      expect(res).not.toHaveSessionCookie();
    }
    for (const kept of issued.slice(2)) expect(await answer(jar, "authenticate", authenticator.authenticate(kept))).toHaveSessionCookie();
  });

  it("authenticate options name nobody: the same shape signed out, signed in, for a user with passkeys or without", async () => {
    const { jar } = await adaRegistersWith(new SoftwareAuthenticator());
    const user = await testDb().user.findFirstOrThrow();
    const signedIn = await options(jar, "authenticate");
    const signedOut = await options(new CookieJar());
    for (const body of [signedIn, signedOut]) {
      expect(Object.keys(body.options).sort()).toEqual(Object.keys(signedOut.options).sort());
      const text = JSON.stringify(body);
      expect(text).not.toContain(user.id);
      expect(text).not.toContain(Buffer.from(user.id).toString("base64url"));
      expect(text).not.toContain("ada@example.com");
      expect(body.options.allowCredentials ?? []).toEqual([]);
    }
  });

  it("no challenge, signature, CSRF or session token reaches a log line, through a registration, a sign-in and refusals", async () => {
    const lines: string[] = [];
    const capture = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
    const spies = [vi.spyOn(console, "log").mockImplementation(capture), vi.spyOn(console, "error").mockImplementation(capture), vi.spyOn(console, "warn").mockImplementation(capture)];
    const secrets: string[] = [];
    try {
      const authenticator = new SoftwareAuthenticator();
      await createUser();
      const { jar } = await signIn();
      const reg = (await options(jar, "register")).options;
      secrets.push(reg.challenge, jar.get("authjs.session-token")!, (await fetchCsrf(jar)));
      await answer(jar, "register", authenticator.register(reg, { origin: "https://evil.example" }));
      await answer(jar, "register", authenticator.register((await options(jar, "register")).options));
      const visitor = new CookieJar();
      const noUv = authenticator.authenticate((await options(visitor)).options, { uv: false, counter: 99 });
      secrets.push(noUv.response.signature);
      await answer(visitor, "authenticate", noUv);
      const otherHandle = authenticator.authenticate((await options(visitor)).options);
      await answer(visitor, "authenticate", { ...otherHandle, response: { ...otherHandle.response, userHandle: "QUJD" } });
      const auth = (await options(visitor)).options;
      const good = authenticator.authenticate(auth);
      secrets.push(auth.challenge, good.response.signature, good.response.authenticatorData);
      const ok = await answer(visitor, "authenticate", good);
      expect(ok).toHaveSessionCookie();
      secrets.push(visitor.get("authjs.session-token")!);
      await answer(visitor, "authenticate", good);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(lines.filter((l) => l.includes(secret))).toEqual([]);
  });
});
