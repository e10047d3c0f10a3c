// ADR 081: the "This wasn't me" link of every security e-mail. A mail scanner
// opening it changes nothing; the owner's button ends every session of the account, removes its
// password and records the report; the link works once, for 7 days, and signs nobody in. Links
// are taken from the real messages the SMTP sink received.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { notifyAccountDeleted, notifySecurityChange, type SecurityChange } from "../../../app/auth/accounts/security-notices.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { createSession } from "../../../app/auth/core/session.server.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import * as wasntMe from "../../../app/routes/auth/wasnt-me.tsx";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { countConsecutiveFailure } from "../../../app/auth/core/limits.server.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, ORIGIN, post } from "../../support/http.ts";
import type { ReceivedMessage } from "../../support/smtp-sink.ts";
import { configure, csrfFor, sessionOf, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { runWithLocale, t, type MessageKey } from "../../../app/i18n/t.server.ts";
import { LOCALES, renderPage, textOf } from "../../support/render-page.tsx";

const smtp = useSmtpSink(null);
afterEach(() => mailSenderIdle());

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
const ADDRESS = "owner@example.com";

async function owner() {
  const user = await testDb().user.create({ data: { email: ADDRESS, emailVerified: new Date(), name: "Owner" }, select: { id: true, email: true, name: true, image: true } });
  // The stored hash's value does not matter here: only whether the row is there.
  await testDb().password.create({ data: { userId: user.id, hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA" } });
  return user;
}

async function signedIn(user: { id: string; email: string | null; name: string | null; image: string | null }) {
  const jar = new CookieJar();
  jar.apply(await createSession(authRequest(get("/", { headers: { "User-Agent": FIREFOX } })), user, { method: "credentials" }));
  return jar;
}

/** The security e-mail of `change`, as the sink received it, and its "This wasn't me" link. */
async function noticeOf(userId: string, change: SecurityChange = { kind: "password-changed" }): Promise<{ message: ReceivedMessage; link: URL }> {
  const before = smtp.sink.messages.length;
  await notifySecurityChange(authRequest(get("/account", { headers: { "User-Agent": FIREFOX } })), userId, change);
  const message = (await smtp.sink.waitFor(before + 1))[before]!;
  return { message, link: wasntMeLinkIn(message) };
}

function wasntMeLinkIn(message: ReceivedMessage): URL {
  const m = /https?:\/\/\S+\/auth\/wasnt-me\?\S+/.exec(message.text ?? "");
  if (!m) throw new Error(`no "This wasn't me" link in:\n${message.text}`);
  return new URL(m[0]);
}

/** A GET of the link in `jar`, as a mail scanner or the owner's browser does. */
async function open(link: URL, jar = new CookieJar()) {
  const res = await callRoute(wasntMe.loader, get(link.pathname + link.search, { jar, headers: { "User-Agent": FIREFOX } }));
  jar.apply(res);
  return { res, page: (await res.clone().json()) as { state: string; csrfToken: string; token: string; email: string } };
}

/** The page's button: POST with its CSRF token, the token and the address (form, or as a JSON client). */
async function press(link: URL, { jar = new CookieJar(), json = false, fields = {} as Record<string, string> } = {}) {
  const csrfToken = await csrfFor(jar);
  const body = { csrfToken, token: link.searchParams.get("token")!, email: link.searchParams.get("email")!, ...fields };
  const request = post("/auth/wasnt-me", body, { jar, headers: { "User-Agent": FIREFOX, ...(json ? { "X-Auth-Return-Redirect": "1" } : {}) } });
  return (await wasntMe.middleware[0]!({ request } as never, () => callRoute(wasntMe.action, request))) as Response;
}

async function reports() {
  return testDb().authEvent.findMany({ where: { type: "security-report" } });
}

async function hasPassword(userId: string) {
  return (await testDb().password.count({ where: { userId } })) === 1;
}

describe.each(["jwt", "database"] as const)(`"This wasn't me", %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    resetRevocations();
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: strategy }));
  });

  it("the owner pressing the button ends every session of the account, removes its password, records the report and signs nobody in", async () => {
    const user = await owner();
    const [laptop, phone] = [await signedIn(user), await signedIn(user)];
    const { link } = await noticeOf(user.id);
    const browser = new CookieJar();
    const res = await press(link, { jar: browser });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { state: string; forgotPasswordUrl: string };
    expect(page.state).toBe("done");
    expect(page.forgotPasswordUrl).toBe(`${ORIGIN}/auth/forgot-password?email=owner%40example.com`);
    // No session cookie for the one who pressed it.
    expect(res.headers.getSetCookie().join("\n")).not.toMatch(/session-token/);
    expect(await sessionOf(browser)).toBeNull();
    for (const jar of [laptop, phone]) expect(await sessionOf(jar)).toBeNull();
    expect(await hasPassword(user.id)).toBe(false);
    const [report] = await reports();
    expect(report!.userId).toBe(user.id);
    expect(JSON.parse(report!.detail!)).toMatchObject({ event: "password-changed", count: 2, passwordRemoved: true });
  });

  it("a thief whose browser kept the account's device cookie no longer passes the consecutive-failure ceiling with the password alone after the owner's report", async () => {
    const user = await createUser(ADDRESS);
    const thief = new CookieJar();
    await signIn(thief, ADDRESS);
    const { link } = await noticeOf(user.id);
    expect((await press(link)).status).toBe(200);
    await createUser(ADDRESS);
    await countConsecutiveFailure(getConfig().rateLimits, ADDRESS, 100);
    const again = await signIn(thief, ADDRESS);
    expect(again.res.headers.get("Location")).toBe(`${ORIGIN}/auth/verify-request?provider=email&type=email`);
    expect(again.res).not.toHaveSessionCookie();
  });

  it("a thief whose browser kept the account's device cookie, signing in again after the owner's report, is a new device again: the owner is told", async () => {
    const user = await createUser(ADDRESS);
    const thief = new CookieJar();
    await signIn(thief, ADDRESS);
    await signIn(thief, ADDRESS);
    const newDeviceNotices = () => testDb().mailQueue.count({ where: { kind: "signin-new-device" } });
    await mailSenderIdle();
    expect(await newDeviceNotices()).toBe(1);
    const { link } = await noticeOf(user.id);
    expect((await press(link)).status).toBe(200);
    // The thief gets back in (say the owner's new password leaked too), from the same browser.
    await createUser(ADDRESS);
    expect((await signIn(thief, ADDRESS)).res.status).toBe(302);
    await mailSenderIdle();
    expect(await newDeviceNotices()).toBe(2);
    // The owner's browser that signs in after the report is remembered from then on.
    const owners = new CookieJar();
    await signIn(owners, ADDRESS);
    await signIn(owners, ADDRESS);
    await mailSenderIdle();
    expect(await newDeviceNotices()).toBe(3);
  });
});

describe(`"This wasn't me" (${dbLabel})`, () => {
  beforeEach(() => {
    resetRevocations();
    configure(smtpEnv(smtp.sink.url));
  });

  it("a thief who signed in, then added a passkey, linked a provider account and turned TOTP on with their own authenticator, is reported: those ways in go, the owner's older ones stay", async () => {
    const user = await owner();
    const dayAgo = new Date(Date.now() - 24 * 3600_000);
    const passkey = (id: string, createdAt?: Date) => ({ userId: user.id, credentialId: id, publicKey: "pk", counter: 0n, deviceType: "singleDevice", name: id, ...(createdAt ? { createdAt } : {}) });
    await testDb().passkey.create({ data: passkey("owners-key", dayAgo) });
    await testDb().account.create({ data: { userId: user.id, type: "oidc", provider: "oidc", providerAccountId: "owner-at-idp", createdAt: dayAgo } });
    const { link } = await noticeOf(user.id, { kind: "signin-new-device" });
    // After the reported sign-in, the thief's additions (each with its own notice, ignored here).
    await testDb().passkey.create({ data: passkey("thiefs-key") });
    await testDb().account.create({ data: { userId: user.id, type: "oidc", provider: "other-idp", providerAccountId: "thief-at-idp" } });
    await testDb().twoFactorCredential.create({ data: { userId: user.id, secretSealed: "sealed", confirmedAt: new Date() } });
    await testDb().recoveryCode.create({ data: { userId: user.id, hash: "thiefs-code" } });

    expect((await press(link)).status).toBe(200);
    expect((await testDb().passkey.findMany({ where: { userId: user.id } })).map((p) => p.credentialId)).toEqual(["owners-key"]);
    expect((await testDb().account.findMany({ where: { userId: user.id } })).map((a) => a.providerAccountId)).toEqual(["owner-at-idp"]);
    // The thief's authenticator would hold the owner's reset hostage: off, codes and all.
    expect(await testDb().twoFactorCredential.count({ where: { userId: user.id } })).toBe(0);
    expect(await testDb().recoveryCode.count({ where: { userId: user.id } })).toBe(0);
    const [report] = await reports();
    expect(JSON.parse(report!.detail!)).toMatchObject({ event: "signin-new-device", passkeysRemoved: 1, accountsUnlinked: 1, secondFactorRemoved: true });
  });

  it("a report leaves a second factor the owner turned on before the reported change", async () => {
    const user = await owner();
    await testDb().twoFactorCredential.create({ data: { userId: user.id, secretSealed: "sealed", confirmedAt: new Date(Date.now() - 3600_000) } });
    await testDb().recoveryCode.create({ data: { userId: user.id, hash: "owners-code", createdAt: new Date(Date.now() - 3600_000) } });
    const { link } = await noticeOf(user.id, { kind: "password-changed" });
    expect((await press(link)).status).toBe(200);
    expect(await testDb().twoFactorCredential.count({ where: { userId: user.id } })).toBe(1);
    expect(await testDb().recoveryCode.count({ where: { userId: user.id } })).toBe(1);
  });

  it("a mail scanner opening the link changes nothing: the page only asks, the sessions and the password stay, the link still works", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    const { link } = await noticeOf(user.id);
    for (let i = 0; i < 3; i++) {
      const { res, page } = await open(link);
      expect(res.status).toBe(200);
      expect(page).toMatchObject({ state: "confirm", email: ADDRESS, token: link.searchParams.get("token") });
      expect(page.csrfToken).toMatch(/\S{20,}/);
    }
    expect((await sessionOf(jar))?.user.email).toBe(ADDRESS);
    expect(await hasPassword(user.id)).toBe(true);
    expect(await reports()).toHaveLength(0);
    expect((await press(link)).status).toBe(200);
  });

  it("two presses at once: one acts, the other gets the page that the link can no longer be used", async () => {
    const user = await owner();
    const { link } = await noticeOf(user.id);
    const answers = await Promise.all([press(link), press(link)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    const states = await Promise.all(answers.map(async (r) => ((await r.json()) as { state: string }).state));
    expect(states.sort()).toEqual(["done", "invalid"]);
    expect(await reports()).toHaveLength(1);
  });

  it("a phisher replaying a used link gets the same page as for any dead link, and nothing happens", async () => {
    const user = await owner();
    const { link } = await noticeOf(user.id);
    expect((await press(link)).status).toBe(200);
    // The owner chose a new password and signed in again.
    await testDb().password.create({ data: { userId: user.id, hash: "new" } });
    const jar = await signedIn(user);
    const opened = await open(link);
    expect(opened.res.status).toBe(400);
    expect(opened.page.state).toBe("invalid");
    const replay = await press(link);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { state: string }).state).toBe("invalid");
    expect(await hasPassword(user.id)).toBe(true);
    expect((await sessionOf(jar))?.user.email).toBe(ADDRESS);
    expect(await reports()).toHaveLength(1);
  });

  it("an expired link (older than 7 days) shows the dead-link page and changes nothing", async () => {
    const user = await owner();
    const { link } = await noticeOf(user.id);
    const row = await testDb().verificationToken.findFirstOrThrow({ where: { purpose: "wasnt-me:password-changed" } });
    expect(row.expires.getTime() - row.createdAt.getTime()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    await testDb().verificationToken.updateMany({ data: { expires: new Date(Date.now() - 1000) } });
    expect((await open(link)).page.state).toBe("invalid");
    expect((await press(link)).status).toBe(400);
    expect(await hasPassword(user.id)).toBe(true);
    expect(await reports()).toHaveLength(0);
  });

  it("forged links — a made-up token, the right token for another address, garbage — show the dead-link page, never a 500", async () => {
    const user = await owner();
    const { link } = await noticeOf(user.id);
    const token = link.searchParams.get("token")!;
    const forged = [
      `/auth/wasnt-me?${new URLSearchParams({ email: ADDRESS, token: "ab".repeat(32) })}`,
      `/auth/wasnt-me?${new URLSearchParams({ email: "thief@example.com", token })}`,
      `/auth/wasnt-me?${new URLSearchParams({ email: ADDRESS, token: token.slice(1) })}`,
      `/auth/wasnt-me?email=${"a".repeat(5000)}&token=%00%ff`,
      `/auth/wasnt-me`,
    ].map((path) => new URL(path, ORIGIN));
    for (const bad of forged) {
      expect((await open(bad)).page.state).toBe("invalid");
      const res = await press(bad);
      expect(res.status).toBe(400);
    }
    expect(await hasPassword(user.id)).toBe(true);
    expect(await reports()).toHaveLength(0);
    expect((await open(link)).page.state).toBe("confirm");
  });

  it("a JSON client gets {url}: the forgotten-password page on success, the Verification error for a dead link", async () => {
    const user = await owner();
    const { link } = await noticeOf(user.id);
    const first = await press(link, { json: true });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ url: `${ORIGIN}/auth/forgot-password?email=owner%40example.com` });
    const again = await press(link, { json: true });
    expect(await again.json()).toEqual({ url: `${ORIGIN}/auth/error?error=Verification` });
    expect(await hasPassword(user.id)).toBe(false);
  });

  it("a POST without the CSRF token, or from another site, changes nothing", async () => {
    const user = await owner();
    const { link } = await noticeOf(user.id);
    // The form again, with a fresh token and the reason; the JSON client gets the protocol's MissingCSRF.
    const res = await press(link, { fields: { csrfToken: "nope" } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ state: "confirm", formError: expect.stringMatching(/expired/) });
    const json = await press(link, { json: true, fields: { csrfToken: "nope" } });
    expect(await json.json()).toEqual({ url: `${ORIGIN}/auth/signin?error=MissingCSRF` });
    const jar = new CookieJar();
    const csrfToken = await csrfFor(jar);
    const crossSite = post("/auth/wasnt-me", { csrfToken, token: link.searchParams.get("token")!, email: ADDRESS }, { jar, headers: { Origin: "https://evil.example" } });
    expect((await callRoute(wasntMe.action, crossSite)).status).toBe(403);
    expect(await hasPassword(user.id)).toBe(true);
    expect((await open(link)).page.state).toBe("confirm");
  });

  it("a client pressing dead links over and over is limited (429, Retry-After), and counted per client", async () => {
    configure({ AUTH_RATE_LIMIT_WASNT_ME_CLIENT: "2/3600" });
    const dead = new URL(`/auth/wasnt-me?${new URLSearchParams({ email: ADDRESS, token: "cd".repeat(32) })}`, ORIGIN);
    expect((await press(dead)).status).toBe(400);
    expect((await press(dead)).status).toBe(400);
    const limited = await press(dead);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
  });

  it("the notice of an account deletion, sent to the address after the row is gone, has a link that records the report", async () => {
    const user = await owner();
    await testDb().user.delete({ where: { id: user.id } });
    await notifyAccountDeleted(authRequest(get("/account", { headers: { "User-Agent": FIREFOX } })), { userId: user.id, address: ADDRESS });
    const [message] = await smtp.sink.waitFor(1);
    expect(message!.subject).toMatch(/account was deleted/);
    const res = await press(wasntMeLinkIn(message!));
    expect(((await res.json()) as { state: string; accountGone: boolean }).accountGone).toBe(true);
    const [report] = await reports();
    expect(report!.userId).toBeNull();
    expect(JSON.parse(report!.detail!)).toMatchObject({ event: "account-deleted", deletedUser: user.id });
  });
});

describe(`"This wasn't me" about a deleted account says so plainly (${dbLabel})`, () => {
  beforeEach(() => configure(smtpEnv(smtp.sink.url)));

  it("the link opened and pressed: the account no longer exists, nothing to sign out, no 'secured' title, in en/fr/de/ar", async () => {
    const user = await owner();
    await testDb().user.delete({ where: { id: user.id } });
    const before = smtp.sink.messages.length;
    await notifyAccountDeleted(authRequest(get("/account", { headers: { "User-Agent": FIREFOX } })), { userId: user.id, address: ADDRESS });
    const link = wasntMeLinkIn((await smtp.sink.waitFor(before + 1))[before]!);
    const opened = await open(link);
    expect(opened.page).toMatchObject({ state: "confirm", accountGone: true });
    const pressed = (await (await press(link)).json()) as { state: string; accountGone: boolean };
    expect(pressed).toMatchObject({ state: "done", accountGone: true });
    for (const locale of LOCALES) {
      const say = (key: MessageKey) => runWithLocale(locale, () => t(key));
      const confirm = textOf(renderPage(wasntMe, link.pathname + link.search, locale, { loaderData: opened.page }));
      expect(confirm).toContain(say("wasntMe.goneIntro"));
      expect(confirm).toContain(say("wasntMe.goneSubmit"));
      expect(confirm).not.toContain(say("wasntMe.submit"));
      expect(confirm).not.toContain(say("wasntMe.after"));
      const done = textOf(renderPage(wasntMe, "/auth/wasnt-me", locale, { loaderData: opened.page, actionData: pressed }));
      expect(done).toContain(say("wasntMe.goneDoneTitle"));
      expect(done).toContain(say("wasntMe.goneDone"));
      expect(done).not.toContain(say("wasntMe.doneTitle"));
    }
  });

  it("a link about a live account still offers to sign out everywhere", async () => {
    const user = await owner();
    const { link } = await noticeOf(user.id);
    const opened = await open(link);
    expect(opened.page).toMatchObject({ state: "confirm", accountGone: false });
    expect(textOf(renderPage(wasntMe, link.pathname + link.search, "en", { loaderData: opened.page }))).toContain(runWithLocale("en", () => t("wasntMe.submit")));
    await testDb().user.delete({ where: { id: user.id } });
  });
});
