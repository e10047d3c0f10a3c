// Delete my account and download my data (ADR 086), through /account's middleware
// and action with real cookies, both session strategies, both databases: the owner who typed the
// word loses every way in and every session (this instance, a fresh one, and another process that
// deleted them), keeps anonymised audit rows, hears of it by e-mail and can sign up again; a thief
// with an old cookie changes nothing; a database failure midway leaves the account whole; the
// download never carries a secret or anybody else's rows.
import { waitUntil } from "../../support/wait.ts";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { deleteAccount } from "../../../app/auth/accounts/deletion.server.ts";
import { loadConfig, resetConfig } from "../../../app/auth/core/config.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { refreshRevocations, resetRevocations, revocationsReady } from "../../../app/auth/core/revocation.server.ts";
import { resetSessionCache } from "../../../app/auth/core/session-cache.server.ts";
import { clearOAuthCaches } from "../../../app/auth/oauth/http.server.ts";
import { sealToken } from "../../../app/auth/oauth/tokens.server.ts";
import { accountDeletedHooks } from "../../../app/auth/signin/registry.server.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import * as account from "../../../app/routes/account.tsx";
import { createUser, signIn } from "../../support/auth.ts";
import { runScript } from "../../support/cli.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http.ts";
import { HOSTILE_CLIENT, startHostileIdp, type HostileIdp } from "../../support/hostile-idp.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { configure, openLink, requestLink, sessionOf, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { accountRefusal } from "../../support/account-refusal.ts";

const smtp = useSmtpSink(null);
const ADA = "ada@example.com";
const FUTURE = () => new Date(Date.now() + 3_600_000);
const CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36";

afterEach(() => mailSenderIdle());

async function accountPage(jar: CookieJar) {
  const res = await callRoute(account.loader, get("/account", { jar }));
  expect(res.status).toBe(200);
  jar.apply(res);
  return (await res.json()) as { csrfToken: string; deleteWord: string };
}

/** POST /account through the route's middleware, as the server runs it: the form, or a JSON client. */
async function intent(jar: CookieJar, fields: Record<string, string>, { json = false } = {}) {
  const { csrfToken } = await accountPage(jar);
  const request = post("/account", { csrfToken, ...fields }, { jar, headers: { "User-Agent": CHROME, ...(json ? { "X-Auth-Return-Redirect": "1" } : {}) } });
  const [reauth, lifecycle] = account.middleware;
  const res = (await reauth!({ request } as never, () => lifecycle!({ request } as never, () => callRoute(account.action, request)) as never)) as Response;
  jar.apply(res);
  return res;
}

async function ageSignIns(userId: string) {
  await testDb().session.updateMany({ where: { userId }, data: { authenticatedAt: new Date(Date.now() - 11 * 60_000) } });
}

/** Everything of `userId` that must be gone, by model, and what may stay. */
async function leftOf(userId: string) {
  const db = testDb();
  const [users, accounts, sessions, passwords, passkeys, secondFactors, recoveryCodes, cutoffs] = await Promise.all([
    db.user.count({ where: { id: userId } }),
    db.account.count({ where: { userId } }),
    db.session.count({ where: { userId } }),
    db.password.count({ where: { userId } }),
    db.passkey.count({ where: { userId } }),
    db.twoFactorCredential.count({ where: { userId } }),
    db.recoveryCode.count({ where: { userId } }),
    db.sessionCutoff.count({ where: { userId } }),
  ]);
  return { users, accounts, sessions, passwords, passkeys, secondFactors, recoveryCodes, cutoffs };
}
const NOTHING = { users: 0, accounts: 0, sessions: 0, passwords: 0, passkeys: 0, secondFactors: 0, recoveryCodes: 0, cutoffs: 0 };

/** A user with every kind of row Vestibule keeps, signed in on two devices. */
async function seededUser() {
  const user = await createUser(ADA, "Ada");
  const { jar: laptop } = await signIn(new CookieJar(), ADA);
  const { jar: phone } = await signIn(new CookieJar(), ADA);
  const db = testDb();
  await db.account.create({ data: { userId: user.id, type: "oidc", provider: "elsewhere", providerAccountId: "ada-1", accessToken: "sealed-access", refreshToken: "sealed-refresh" } });
  await db.passkey.create({ data: { userId: user.id, credentialId: "cred-ada", publicKey: "pk-ada", counter: 0n, deviceType: "multiDevice", name: "Phone" } });
  await db.twoFactorCredential.create({ data: { userId: user.id, secretSealed: "sealed-totp-secret", confirmedAt: new Date() } });
  await db.recoveryCode.create({ data: { userId: user.id, hash: "recovery-hash-ada" } });
  await db.verificationToken.create({ data: { identifier: ADA, tokenHash: "link-hash-ada", expires: FUTURE(), purpose: "reset", codeHash: "code-hash-ada", requestId: "req-ada" } });
  await db.verificationToken.create({ data: { identifier: "new-ada@example.com", tokenHash: "change-hash-ada", expires: FUTURE(), purpose: "change-email", userId: user.id } });
  await db.verificationToken.create({ data: { identifier: "grace@example.com", tokenHash: "link-hash-grace", expires: FUTURE() } });
  await db.mailQueue.create({ data: { recipient: ADA, kind: "password-changed", payload: "{}", sentAt: new Date() } });
  await db.authEvent.create({ data: { type: "signin", userId: user.id, ip: "203.0.113.7", userAgent: CHROME, detail: '{"provider":"credentials"}' } });
  return { user, laptop, phone };
}

describe.each(["jwt", "database"] as const)(`delete my account, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    resetRevocations();
    resetSessionCache();
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: strategy }));
  });

  it("the owner types the word shown: every way in, session and pending request is gone, events keep the id without addresses, a security e-mail goes out, and the address signs up again", async () => {
    const { user, laptop, phone } = await seededUser();
    const page = await accountPage(laptop);
    expect(page.deleteWord).toBe("DELETE");

    const wrong = await intent(laptop, { intent: "account-delete", confirm: "delete" });
    // Back to the page, which asks for the word again in the section (tests/support/account-refusal.ts).
    expect(wrong.status).toBe(303);
    expect((await accountRefusal(wrong, laptop)).fieldErrors.confirm).toContain("DELETE");
    expect(await leftOf(user.id)).not.toEqual(NOTHING);

    const res = await intent(laptop, { intent: "account-delete", confirm: " DELETE " });
    expect(res).toHaveRedirect("/?deleted=account");
    expect(res.headers.getSetCookie().some((c) => /session-token=;/.test(c) || (/session-token/.test(c) && /Max-Age=0/i.test(c)))).toBe(true);
    expect(await leftOf(user.id)).toEqual(NOTHING);
    // Left: another user's link, and the "This wasn't me" link of the deletion's own notice (ADR 081).
    const tokens = await testDb().verificationToken.findMany();
    expect(tokens.filter((v) => v.purpose !== "wasnt-me:account-deleted").map((v) => v.tokenHash)).toEqual(["link-hash-grace"]);
    expect(tokens.filter((v) => v.purpose === "wasnt-me:account-deleted").map((v) => v.identifier)).toEqual([ADA]);

    const events = await testDb().authEvent.findMany({ where: { userId: user.id } });
    expect(events.length).toBeGreaterThanOrEqual(4);
    expect(events.filter((e) => e.ip !== null || e.userAgent !== null)).toEqual([]);
    expect(JSON.parse(events.find((e) => e.type === "user-deleted")!.detail!)).toEqual({ count: 2, source: "self", session: expect.stringMatching(/^[0-9a-f]{64}$/) });

    // Both devices are signed out here, and in a fresh process reading only the database.
    expect(await sessionOf(laptop)).toBeNull();
    expect(await sessionOf(phone)).toBeNull();
    resetRevocations();
    resetSessionCache();
    expect(await sessionOf(phone)).toBeNull();

    // The deletion's notice, whatever the sign-ins before it sent from new browsers (ADR 081).
    const notice = (await waitUntil(() => smtp.sink.messages.filter((m) => /account was deleted/.test(m.subject ?? "")), (m) => m.length > 0))[0];
    expect(notice!.envelope.to).toEqual([ADA]);
    expect((await testDb().mailQueue.findMany({ where: { recipient: ADA } })).map((m) => m.kind)).toEqual(["account-deleted"]);

    // The address is free: an e-mail link signs a new user up with it.
    const jar = new CookieJar();
    await requestLink(jar, { email: ADA });
    const [link] = await waitUntil(() => smtp.sink.messages.filter((m) => /\/auth\/callback\/email\?/.test(m.text ?? "")), (m) => m.length > 0);
    await openLink(linkIn(link!), jar);
    expect((await sessionOf(jar))?.user.email).toBe(ADA);
    const again = await testDb().user.findUniqueOrThrow({ where: { email: ADA } });
    expect(again.id).not.toBe(user.id);
  });

  it("a visitor who double-clicks Delete my account gets the deleted confirmation from both posts (form and JSON); a stranger's post without a session is still sent to sign in", async () => {
    for (const json of [false, true]) {
      await createUser(ADA, "Ada");
      const { jar } = await signIn(new CookieJar(), ADA);
      const { csrfToken } = await accountPage(jar);
      // Both posts leave the browser with the cookies as they are before either answer.
      const cookies = Object.fromEntries(jar.names().map((n) => [n, jar.get(n)!]));
      const send = () => {
        const request = post("/account", { csrfToken, intent: "account-delete", confirm: "DELETE" }, { jar: new CookieJar(cookies), headers: { "User-Agent": CHROME, ...(json ? { "X-Auth-Return-Redirect": "1" } : {}) } });
        const [reauth, lifecycle] = account.middleware;
        return reauth!({ request } as never, () => lifecycle!({ request } as never, () => callRoute(account.action, request)) as never) as Promise<Response>;
      };
      for (const res of [await send(), await send()]) {
        if (json) expect(await res.json()).toEqual({ url: `${ORIGIN}/?deleted=account` });
        else expect(res).toHaveRedirect("/?deleted=account");
      }
      expect(await testDb().user.count({ where: { email: ADA } })).toBe(0);
    }
    // A browser whose session was never one of a deleted account's is sent to sign in, as before.
    const stranger = new CookieJar();
    const strangerCsrf = await fetchCsrf(stranger);
    const request = post("/account", { csrfToken: strangerCsrf, intent: "account-delete", confirm: "DELETE" }, { jar: stranger });
    const [reauth, lifecycle] = account.middleware;
    const res = (await Promise.resolve(reauth!({ request } as never, () => lifecycle!({ request } as never, () => callRoute(account.action, request)) as never)).catch((e: unknown) => e)) as Response;
    expect(res.headers.get("Location")).toContain("error=SessionRequired");
  });

  it("a JSON client is told the word when it is missing, and gets the landing URL once it is given", async () => {
    const user = await createUser(ADA, "Ada");
    const { jar } = await signIn(new CookieJar(), ADA);
    const refused = await intent(jar, { intent: "account-delete" }, { json: true });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "ConfirmationRequired", word: "DELETE" });
    expect(await testDb().user.count({ where: { id: user.id } })).toBe(1);

    const res = await intent(jar, { intent: "account-delete", confirm: "DELETE" }, { json: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: `${ORIGIN}/?deleted=account` });
    expect(await leftOf(user.id)).toEqual(NOTHING);
    expect(await sessionOf(jar)).toBeNull();
  });

  it("a thief with an 11-minute-old copy of the cookie can neither delete nor download (form and JSON)", async () => {
    const user = await createUser(ADA, "Ada");
    const { jar } = await signIn(new CookieJar(), ADA);
    await ageSignIns(user.id);
    for (const fields of [{ intent: "account-delete", confirm: "DELETE" }, { intent: "account-export" }] as Record<string, string>[]) {
      const form = await intent(jar, fields);
      expect(form.status).toBe(403);
      expect(((await form.json()) as { reauthUrl: string }).reauthUrl).toBe(`${ORIGIN}/auth/reauth?callbackUrl=%2Faccount`);
      const json = await intent(jar, fields, { json: true });
      expect(json.status).toBe(403);
      expect(await json.json()).toEqual({ error: "ReauthRequired", url: `${ORIGIN}/auth/reauth?callbackUrl=%2Faccount` });
    }
    expect(await testDb().user.count({ where: { id: user.id } })).toBe(1);
    expect(await testDb().authEvent.count({ where: { type: "account-exported" } })).toBe(0);
  });
});

describe.each(["jwt", "database"] as const)(`download my data, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    resetRevocations();
    resetSessionCache();
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: strategy }));
  });

  it("a file with the profile, ways in, sessions and the user's own events — never a hash, token, secret, or another user's rows (form and JSON)", async () => {
    const { user, laptop } = await seededUser();
    const password = await testDb().password.findUniqueOrThrow({ where: { userId: user.id } });
    const sessions = await testDb().session.findMany({ where: { userId: user.id } });
    // Another user, with rows of every kind the file could leak.
    const grace = await createUser("grace@example.com", "Grace Hopper");
    await signIn(new CookieJar(), "grace@example.com");
    await testDb().authEvent.create({ data: { type: "signin", userId: grace.id, ip: "198.51.100.9", userAgent: "GraceBrowser/1.0" } });
    await testDb().account.create({ data: { userId: grace.id, type: "oidc", provider: "elsewhere", providerAccountId: "grace-1" } });

    for (const json of [false, true]) {
      const res = await intent(laptop, { intent: "account-export" }, { json });
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Disposition")).toMatch(/^attachment; filename="account-data-\d{4}-\d{2}-\d{2}\.json"$/);
      expect(res.headers.get("Cache-Control")).toBe("no-store");
      expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
      const bytes = await res.text();
      const secrets = [
        password.hash,
        ...sessions.map((s) => s.tokenHash).filter((h): h is string => h !== null),
        "sealed-access",
        "sealed-refresh",
        "sealed-totp-secret",
        "recovery-hash-ada",
        "link-hash-ada",
        "code-hash-ada",
        "req-ada",
        "change-hash-ada",
        "pk-ada",
        "cred-ada",
        // The other user: address, id, name, client address, device, account.
        "grace@example.com",
        grace.id,
        "Grace Hopper",
        "198.51.100.9",
        "GraceBrowser",
        "grace-1",
      ];
      expect(secrets.filter((secret) => bytes.includes(secret))).toEqual([]);
      const file = JSON.parse(bytes);
      expect(file.profile).toMatchObject({ id: user.id, email: ADA, name: "Ada" });
      expect(file.waysToSignIn.password.set).toBe(true);
      expect(file.waysToSignIn.linkedAccounts).toEqual([expect.objectContaining({ provider: "elsewhere", accountId: "ada-1" })]);
      expect(file.waysToSignIn.passkeys).toEqual([expect.objectContaining({ name: "Phone", deviceType: "multiDevice" })]);
      expect(file.waysToSignIn.secondFactor).toMatchObject({ on: true, recoveryCodesLeft: 1 });
      expect(file.sessions).toHaveLength(2);
      expect(file.sessions.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
      expect(file.events.map((e: { type: string }) => e.type)).toContain("signin");
      expect(file.events.find((e: { ip: string | null }) => e.ip === "203.0.113.7")).toBeDefined();
    }
    expect(await testDb().authEvent.count({ where: { type: "account-exported", userId: user.id } })).toBe(2);
  });

  it("a loop of downloads stops at ACCOUNT_EXPORT: the form shows the refusal, a JSON client gets 429", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: strategy, AUTH_RATE_LIMIT_ACCOUNT_EXPORT: "2/3600" }));
    const user = await createUser(ADA, "Ada");
    const { jar } = await signIn(new CookieJar(), ADA);
    for (let i = 0; i < 2; i++) expect((await intent(jar, { intent: "account-export" })).status).toBe(200);
    const form = await intent(jar, { intent: "account-export" });
    expect(form.status).toBe(429);
    expect(((await form.json()) as { formError: string }).formError).toMatch(/^Too many attempts/);
    const json = await intent(jar, { intent: "account-export" }, { json: true });
    expect(json.status).toBe(429);
    expect(await json.json()).toMatchObject({ error: "RateLimited" });
    expect(await testDb().authEvent.count({ where: { type: "account-exported", userId: user.id } })).toBe(2);
  });
});

// Two processes: the command line deletes, this process (another instance) holds a session of
// each strategy, read and cached before the deletion. One command run covers both.
describe(`npm run user:delete from another process (${dbLabel})`, () => {
  beforeEach(() => {
    resetRevocations();
    resetSessionCache();
  });

  it("asks for --yes, then deletes: the sessions this instance holds, jwt and database, are refused within the revocation bound", { timeout: 180_000 }, async () => {
    await createUser(ADA, "Ada");
    const jars = {} as Record<"jwt" | "database", CookieJar>;
    for (const strategy of ["jwt", "database"] as const) {
      configure({ AUTH_SESSION_STRATEGY: strategy });
      jars[strategy] = (await signIn(new CookieJar(), ADA)).jar;
      await revocationsReady();
      expect((await sessionOf(jars[strategy]))?.user.email).toBe(ADA);
    }
    const [unconfirmed, unknown] = await Promise.all([
      runScript("scripts/user-delete.ts", ["--email", ADA]),
      runScript("scripts/user-delete.ts", ["--email", "nobody@example.com", "--yes"]),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("user:delete: no user with the address nobody@example.com");
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("add --yes to delete");
    expect(await testDb().user.count()).toBe(1);

    const deleted = await runScript("scripts/user-delete.ts", ["--email", ADA, "--yes"]);
    expect(deleted).toMatchObject({ code: 0 });
    expect(deleted.stdout).toContain(`${ADA} deleted; 2 session(s) ended`);
    // PostgreSQL: the NOTIFY arrives well before the poll; SQLite (one instance per file): the poll.
    if (dbLabel === "sqlite") await refreshRevocations();
    for (const strategy of ["jwt", "database"] as const) {
      configure({ AUTH_SESSION_STRATEGY: strategy });
      await vi.waitFor(async () => expect(await sessionOf(jars[strategy])).toBeNull(), { timeout: 1_000, interval: 20 });
    }
    const event = await testDb().authEvent.findFirstOrThrow({ where: { type: "user-deleted" } });
    expect(JSON.parse(event.detail!)).toEqual({ count: 2, source: "cli" });
  });
});

describe(`deletion is all or nothing (${dbLabel})`, () => {
  const TRIGGER =
    dbLabel === "postgres"
      ? [
          `CREATE OR REPLACE FUNCTION refuse_user_delete() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END; $$ LANGUAGE plpgsql`,
          `CREATE TRIGGER refuse_user_delete BEFORE DELETE ON "User" FOR EACH ROW EXECUTE FUNCTION refuse_user_delete()`,
        ]
      : [`CREATE TRIGGER refuse_user_delete BEFORE DELETE ON "User" BEGIN SELECT RAISE(ABORT, 'injected failure'); END`];
  const DROP = dbLabel === "postgres" ? [`DROP TRIGGER IF EXISTS refuse_user_delete ON "User"`, `DROP FUNCTION IF EXISTS refuse_user_delete()`] : [`DROP TRIGGER IF EXISTS refuse_user_delete`];

  beforeEach(() => configure(smtpEnv(smtp.sink.url)));
  afterEach(async () => {
    for (const s of DROP) await testDb().$executeRawUnsafe(s);
  });

  it("the database fails at the last step (deleting the user row): nothing is deleted, anonymised or ended", async () => {
    const { user, laptop } = await seededUser();
    const before = await leftOf(user.id);
    const tokensBefore = await testDb().verificationToken.count();
    const queuedBefore = await testDb().mailQueue.count({ where: { recipient: ADA } });
    for (const s of TRIGGER) await testDb().$executeRawUnsafe(s);
    const ar = authRequest(get("/account", { jar: laptop }));
    await expect(deleteAccount(user.id, { source: "self" }, { hooks: accountDeletedHooks, ar })).rejects.toThrow();
    expect(await leftOf(user.id)).toEqual(before);
    expect(await testDb().verificationToken.count()).toBe(tokensBefore);
    expect(await testDb().mailQueue.count({ where: { recipient: ADA } })).toBe(queuedBefore);
    expect(await testDb().sessionRevocation.count()).toBe(0);
    expect(await testDb().authEvent.count({ where: { userId: user.id, ip: "203.0.113.7" } })).toBe(1);
    expect(await testDb().authEvent.count({ where: { type: "user-deleted" } })).toBe(0);
    expect((await sessionOf(laptop))?.user.email).toBe(ADA);
  });
});

describe(`the providers' tokens (${dbLabel})`, () => {
  let hostile: HostileIdp;
  beforeAll(async () => {
    hostile = await startHostileIdp();
  });
  afterAll(async () => {
    await hostile?.stop();
    for (const k of ["AUTH_OIDC_ISSUER", "AUTH_OIDC_ID", "AUTH_OIDC_SECRET"]) delete process.env[k];
    clearOAuthCaches();
    resetConfig();
  });

  it("are revoked at the provider after the deletion; a provider that never answers does not hold it up", async () => {
    hostile.reset("ok");
    configure({ AUTH_OIDC_ISSUER: hostile.issuer, AUTH_OIDC_ID: HOSTILE_CLIENT.clientId, AUTH_OIDC_SECRET: HOSTILE_CLIENT.clientSecret });
    clearOAuthCaches();
    resetConfig({ ...loadConfig(), oauthTimeoutMs: 1_000 });
    const user = await createUser(ADA, "Ada");
    for (const [i, token] of ["refresh-of-ada", "revoke-never"].entries()) {
      const providerAccountId = `hostile-${i}`;
      await testDb().account.create({
        data: { userId: user.id, type: "oidc", provider: "oidc", providerAccountId, refreshToken: await sealToken(token, { provider: "oidc", providerAccountId, field: "refreshToken" }) },
      });
    }
    const result = await deleteAccount(user.id, { source: "cli" }, { hooks: accountDeletedHooks, ar: authRequest(get("/")) });
    expect(result).toMatchObject({ ok: true });
    expect(hostile.revoked).toEqual(["refresh-of-ada"]);
    expect(await leftOf(user.id)).toEqual(NOTHING);
  });
});
