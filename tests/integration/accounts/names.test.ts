// Issue 31 item 6: one name rule for every way a name arrives — the sign-up form, the /account
// profile form and POST /auth/session (JSON), an OAuth/OIDC profile, `npm run user:add`, and a
// passkey's name. Typed by a person: refused with the reason (the limit in words for one too long,
// since the field no longer cuts a paste silently). From a provider (not typed by the user): made
// safe, never a refused sign-in. Nothing that reverses, hides or floats text is ever stored.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as sessionRoute from "../../../app/routes/auth/session.ts";
import * as account from "../../../app/routes/account.tsx";
import { createUser, signIn } from "../../support/auth.ts";
import { runScript } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, post } from "../../support/http.ts";
import { ALICE, BOB, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { signUp } from "../passwords/helpers.ts";
import { accountRefusal } from "../../support/account-refusal.ts";

const smtp = useSmtpSink(null);

/** Names a person might paste that must never be stored as typed. */
const HOSTILE = {
  "a right-to-left override (\"exe.pdf\" shown as \"fdp.exe\")": "Invoice\u202Efdp.exe",
  "a zero-width space": "Ada\u200BLovelace",
  "a lone combining accent": "\u0301Ada",
  "a stack of combining marks": "Ada\u0301\u0302\u0303\u0304\u0305\u0306",
  "a byte-order mark inside": "Ada\uFEFFLovelace",
  "a joiner at the end": "Ada\u200D",
};

const LONG = "A".repeat(140);

async function profileForm(jar: CookieJar, name: string) {
  const csrfToken = await fetchCsrf(jar);
  return callRoute(account.action, post("/account", { csrfToken, intent: "update-profile", name }, { jar }));
}

async function profileJson(jar: CookieJar, name: string) {
  const csrfToken = await fetchCsrf(jar);
  return callRoute(sessionRoute.action, post("/auth/session", { csrfToken, data: { name } }, { jar, json: true }));
}

describe(`one name rule (${dbLabel})`, () => {
  beforeEach(async () => {
    await resetDatabase();
    configure(smtpEnv(smtp.sink.url, { AUTH_PASSWORDS: "true" }));
  });

  it.each(Object.entries(HOSTILE))("a visitor signing up with %s in the name is refused at the name field, and nothing is stored", async (_, name) => {
    const res = await signUp(new CookieJar(), { email: "new@example.com", password: "a long enough passphrase 42", name });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { fieldErrors: Record<string, string> }).fieldErrors.name).toMatch(/invisible|control/);
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("a visitor pasting a 140-character name into the sign-up form is told the limit in words, not cut short", async () => {
    const res = await signUp(new CookieJar(), { email: "new@example.com", password: "a long enough passphrase 42", name: LONG });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { fieldErrors: Record<string, string> }).fieldErrors.name).toBe("Use at most 100 characters for the name: this one has 140.");
  });

  it.each(Object.entries(HOSTILE))("a signed-in user setting a name with %s is refused, by the form and by POST /auth/session", async (_, name) => {
    const user = await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const form = await profileForm(jar, name);
    // A browser is sent back to the page, which names the reason (tests/support/account-refusal.ts).
    expect(form.status).toBe(303);
    expect((await accountRefusal(form, jar)).fieldErrors.name).toMatch(/invisible|control/);
    const json = await profileJson(jar, name);
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: string }).error).toMatch(/invisible|control/);
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).name).toBe("Ada");
  });

  it("a signed-in user pasting a name longer than the field is told the limit in words (form and JSON), and the name stays", async () => {
    const user = await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const form = await profileForm(jar, LONG);
    expect((await accountRefusal(form, jar)).fieldErrors.name).toBe("Use at most 100 characters for the name: this one has 140.");
    expect(form.headers.get("Location")).not.toContain("PPPP");
    const json = await profileJson(jar, LONG);
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({ error: "Use at most 100 characters for the name: this one has 140." });
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).name).toBe("Ada");
    // Letters with their accents, joiners inside an emoji and a Persian word are names.
    for (const fine of ["Zoë Ångström", "Ngọc Ánh", "👩‍💻 Ada", "می‌خواهم"]) {
      expect((await profileForm(jar, fine)).status).toBe(302);
      expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).name).toBe(fine.normalize("NFC"));
    }
  });

  it("a JSON client renaming a passkey or setting the name on /account gets {error, message} with the limit in words, or {ok, url}", async () => {
    const user = await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const passkey = await testDb().passkey.create({ data: { userId: user.id, credentialId: "cred-1", publicKey: "pk", counter: 0n, deviceType: "singleDevice", name: "Laptop" } });
    const post_ = async (fields: Record<string, string>) => {
      const csrfToken = await fetchCsrf(jar);
      const request = post("/account", { csrfToken, ...fields }, { jar, headers: { "X-Auth-Return-Redirect": "1" } });
      const run = (i: number): Promise<Response> =>
        i === account.middleware.length ? callRoute(account.action, request) : (account.middleware[i]!({ request } as never, (() => run(i + 1)) as never) as Promise<Response>);
      const res = await run(0);
      expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
      return { status: res.status, body: await res.json() };
    };
    expect(await post_({ intent: "passkey-rename", passkeyId: passkey.id, name: "P".repeat(75) })).toEqual({
      status: 400,
      body: { error: "InvalidName", field: "passkeyName", message: "Use at most 60 characters for the name: this one has 75." },
    });
    expect(await post_({ intent: "update-profile", name: LONG })).toEqual({
      status: 400,
      body: { error: "InvalidName", field: "name", message: "Use at most 100 characters for the name: this one has 140." },
    });
    expect(await post_({ intent: "update-profile", name: "Ada\u202Egnp" })).toMatchObject({ status: 400, body: { error: "InvalidName", message: expect.stringMatching(/invisible/) } });
    expect(await post_({ intent: "passkey-rename", passkeyId: passkey.id, name: "Work laptop" })).toEqual({ status: 200, body: { ok: true, url: "http://localhost:3000/account?updated=passkey-renamed#passkeys" } });
    expect(await post_({ intent: "update-profile", name: "Ada L." })).toEqual({ status: 200, body: { ok: true, url: "http://localhost:3000/account?updated=profile#profile-notice" } });
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).name).toBe("Ada L.");
  });

  it("an operator adding a user with user:add and a hostile or over-long name is refused (exit 1, the reason) and nothing is stored", { timeout: 120_000 }, async () => {
    const add = (name: string) => runScript("scripts/user-add.ts", ["--email", "cli@example.com", "--password", "a long enough passphrase 42", "--name", name]);
    const [override, long] = await Promise.all([add(HOSTILE['a right-to-left override ("exe.pdf" shown as "fdp.exe")']), add(LONG)]);
    expect(override.code).toBe(1);
    expect(override.stderr).toContain("user:add: name: A name cannot contain invisible or control characters");
    expect(long.code).toBe(1);
    expect(long.stderr).toContain("user:add: name: Use at most 100 characters for the name: this one has 140.");
    expect(await testDb().user.count()).toBe(0);
  });

  it("a user renaming a passkey with a hostile or over-long name is refused with the reason and the limit in words", async () => {
    const user = await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const passkey = await testDb().passkey.create({ data: { userId: user.id, credentialId: "cred-1", publicKey: "pk", counter: 0n, deviceType: "singleDevice", name: "Laptop" } });
    const rename = async (name: string) => {
      const csrfToken = await fetchCsrf(jar);
      return callRoute(account.action, post("/account", { csrfToken, intent: "passkey-rename", passkeyId: passkey.id, name }, { jar }));
    };
    const long = await rename("P".repeat(75));
    expect(long.status).toBe(400);
    expect(((await long.json()) as { fieldErrors: Record<string, string> }).fieldErrors.passkeyName).toBe("Use at most 60 characters for the name: this one has 75.");
    for (const name of Object.values(HOSTILE)) expect((await rename(name)).status).toBe(400);
    expect((await testDb().passkey.findUniqueOrThrow({ where: { id: passkey.id } })).name).toBe("Laptop");
  });
});

describe(`a provider's profile name (${dbLabel})`, () => {
  let idp: TestIdp;
  const MALLORY = { ...BOB, sub: "idp-mallory", email: "mallory@example.com", emailVerified: true, name: "\u0301Mal\u200Blory\u202Efdp.exe\uFEFF " + "x".repeat(150), password: "mallory-password" };
  beforeAll(async () => {
    idp = await startTestIdp({ users: [ALICE, MALLORY] });
  });
  afterAll(() => idp?.stop());
  beforeEach(async () => {
    await resetDatabase();
    idp.configure({});
  });

  it("a hostile name from an OpenID profile is made safe, not a refused sign-in: no override, no invisible or lone marks, at most 100 characters", async () => {
    const { res } = await signInThroughIdp(new CookieJar(), MALLORY);
    expect(res.status).toBe(302);
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "mallory@example.com" } });
    expect(user.name).toBe(`Mallory${"fdp.exe"} ${"x".repeat(100 - "Malloryfdp.exe ".length)}`);
    expect(user.name!.length).toBe(100);
  });
});
