// Issue 18, "One stolen cookie must never own the account" (ADR 058,
// ADR 059): a copy of the owner's session cookie whose sign-in is older than AUTH_REAUTH_MAX_AGE
// changes nothing about how the account is protected, and the owner hears of every change that
// does happen. The copy is aged by moving its session row's authenticatedAt back (no sleeping).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { getMailer } from "../../../app/mail/mailer.server.ts";
import { requireRecentAuth } from "../../../app/auth/index.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { refreshRevocations, resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { createSession, getSession } from "../../../app/auth/core/session.server.ts";
import { mailSenderIdle, sendDueMail, stopMailSender } from "../../../app/mail/queue.server.ts";
import * as account from "../../../app/routes/account.tsx";
import * as accountEmail from "../../../app/routes/account-email.tsx";
import * as signinRoute from "../../../app/routes/auth/signin.tsx";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, ORIGIN, post } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp, sessionOf } from "../../support/oauth-flow.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";

const smtp = useSmtpSink(null);
let idp: TestIdp;
beforeAll(async () => {
  idp = await startTestIdp();
});
afterAll(() => idp?.stop());
// A message queued by one test is sent (in the background) before the next one starts.
afterEach(() => mailSenderIdle());

const MINUTE = 60_000;
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

type Owner = { id: string; email: string | null; name: string | null; image: string | null };

async function owner(email = "owner@example.com"): Promise<Owner> {
  return testDb().user.create({ data: { email, emailVerified: new Date(), name: "Owner" }, select: { id: true, email: true, name: true, image: true } });
}

/** A browser signed in as `user` now; `copy()` is a thief's copy of its cookies. */
async function signedIn(user: Owner) {
  const jar = new CookieJar();
  jar.apply(await createSession(authRequest(get("/", { headers: { "User-Agent": FIREFOX } })), user, { method: "credentials" }));
  return jar;
}

function copyOf(jar: CookieJar): CookieJar {
  const copy = new CookieJar();
  for (const name of jar.names()) copy.set(name, jar.get(name)!);
  return copy;
}

/** Moves the sign-in of every session of the user `minutes` back, as if that much time had passed. */
async function ageSignIns(userId: string, minutes: number) {
  await testDb().session.updateMany({ where: { userId }, data: { authenticatedAt: new Date(Date.now() - minutes * MINUTE) } });
}

async function accountPage(jar: CookieJar) {
  const res = await callRoute(account.loader, get("/account", { jar }));
  expect(res.status).toBe(200);
  jar.apply(res);
  return (await res.json()) as { csrfToken: string; recentAuth: { recent: boolean; url: string } };
}

/** POST /account as the form does, or as a JSON client (`X-Auth-Return-Redirect: 1`) through the route's middleware. */
async function intent(jar: CookieJar, fields: Record<string, string>, { json = false } = {}) {
  const { csrfToken } = await accountPage(jar);
  const request = post("/account", { csrfToken, ...fields }, { jar, headers: { "User-Agent": FIREFOX, ...(json ? { "X-Auth-Return-Redirect": "1" } : {}) } });
  const res = (await account.middleware[0]!({ request } as never, () => callRoute(account.action, request))) as Response;
  jar.apply(res);
  return res;
}

const REAUTH_URL = `${ORIGIN}/auth/reauth?callbackUrl=%2Faccount`;

async function expectReauthForm(res: Response) {
  expect(res.status).toBe(403);
  const body = (await res.json()) as { formError: string; reauthUrl: string };
  expect(body.formError).toMatch(/sign in again/i);
  expect(body.reauthUrl).toBe(REAUTH_URL);
}

async function queued(kind?: string) {
  return testDb().mailQueue.findMany({ where: kind ? { kind } : {}, orderBy: { createdAt: "asc" } });
}

describe.each(["jwt", "database"] as const)(`a copied session cookie, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    resetRevocations();
    idp.configure({});
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: strategy }));
  });

  it("a thief with an 11-minute-old copied cookie cannot change the e-mail address (form and JSON), and nothing is sent", async () => {
    const user = await owner();
    const thief = copyOf(await signedIn(user));
    await ageSignIns(user.id, 11);
    await expectReauthForm(await intent(thief, { intent: "change-email", email: "thief@example.com" }));
    const json = await intent(thief, { intent: "change-email", email: "thief@example.com" }, { json: true });
    expect(json.status).toBe(403);
    expect(await json.json()).toEqual({ error: "ReauthRequired", url: REAUTH_URL });
    expect(await testDb().verificationToken.count()).toBe(0);
    await mailSenderIdle();
    expect(smtp.sink.messages).toHaveLength(0);
  });

  it("a thief cannot confirm an address change with an old cookie, nor without one: the link waits for the owner's recent sign-in", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    expect((await intent(jar, { intent: "change-email", email: "new@example.com" })).status).toBe(200);
    const [message] = await smtp.sink.waitFor(1);
    const link = linkIn(message!);
    await ageSignIns(user.id, 11);
    for (const browser of [copyOf(jar), new CookieJar()]) {
      const shown = await callRoute(accountEmail.loader, get(link.pathname + link.search, { jar: browser }));
      browser.apply(shown);
      const page = (await shown.json()) as { csrfToken: string; token: string; address: string };
      const res = await callRoute(accountEmail.action, post("/account/email", { csrfToken: page.csrfToken, token: page.token, email: page.address }, { jar: browser }));
      expect(res.status).toBe(403);
      const body = (await res.json()) as { error: string; url: string };
      expect(body.error).toBe("ReauthRequired");
      expect(body.url).toMatch(new RegExp(`^${ORIGIN}/auth/reauth\\?callbackUrl=%2Faccount%2Femail%3Ftoken%3D`));
    }
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("owner@example.com");
    expect(await testDb().verificationToken.count()).toBe(1);
  });

  it("the owner right after signing in changes the address, and the old address gets a security e-mail", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    expect((await intent(jar, { intent: "change-email", email: "new@example.com" })).status).toBe(200);
    const [message] = await smtp.sink.waitFor(1);
    const link = linkIn(message!);
    const page = (await (await callRoute(accountEmail.loader, get(link.pathname + link.search, { jar }))).json()) as { csrfToken: string; token: string; address: string };
    const res = await callRoute(accountEmail.action, post("/account/email", { csrfToken: page.csrfToken, token: page.token, email: page.address }, { jar, headers: { "User-Agent": FIREFOX } }));
    expect(res).toHaveRedirect("/account?updated=email");
    expect((await queued("email-changed")).map((m) => m.recipient).sort()).toEqual(["new@example.com", "owner@example.com"]);
    const messages = await smtp.sink.waitFor(3);
    const notice = messages.find((m) => m.envelope.to.includes("owner@example.com"))!;
    expect(notice.subject).toMatch(/e-mail address .* was changed/);
    expect(notice.text).toContain("from owner@example.com to new@example.com");
    expect(notice.text).toMatch(/When: [A-Z][a-z]{2} \d{1,2}, \d{4}, \d\d:\d\d [AP]M UTC/);
    expect(notice.text).toContain("Device: Firefox on Linux");
    expect(notice.text).toContain(`${ORIGIN}/auth/forgot-password`);
    // Nothing in it signs anybody in: no sign-in link, no callback, no code; the one token is the
    // "This wasn't me" link's (tests/integration/accounts/wasnt-me.test.ts: it signs nobody in).
    expect(notice.text).toMatch(/\/auth\/wasnt-me\?email=owner%40example.com&token=[0-9a-f]{64}/);
    expect(notice.text!.replace(/\S+\/auth\/wasnt-me\?\S+/, "")).not.toMatch(/callback|token=|\b\d{6}\b/);
  });

  it("a thief with an old copied cookie cannot turn on TOTP nor see recovery codes; the owner just signed in can, and is told", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    const thief = copyOf(jar);
    await ageSignIns(user.id, 11);
    await expectReauthForm(await intent(thief, { intent: "totp-start" }));
    await expectReauthForm(await intent(thief, { intent: "totp-confirm", code: "123456" }));
    const json = await intent(thief, { intent: "totp-start" }, { json: true });
    expect(json.status).toBe(403);
    expect(await json.json()).toEqual({ error: "ReauthRequired", url: REAUTH_URL });
    expect(await testDb().twoFactorCredential.count()).toBe(0);
    // The /account page says so up front.
    expect((await accountPage(thief)).recentAuth).toEqual({ recent: false, url: REAUTH_URL });
  });

  it("a thief with an old copied cookie cannot set or change a password, nor end the owner's other sessions", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    const phone = await signedIn(user);
    const thief = copyOf(jar);
    await ageSignIns(user.id, 11);
    await expectReauthForm(await intent(thief, { intent: "password-set", password: "a long enough passphrase for the thief" }));
    await expectReauthForm(await intent(thief, { intent: "revoke-others" }));
    await expectReauthForm(await intent(thief, { intent: "revoke-all" }));
    const phoneId = (await getSession(authRequest(get("/", { jar: phone })), { roll: false })).session!.sessionId!;
    await expectReauthForm(await intent(thief, { intent: "revoke-session", sessionId: phoneId }));
    expect(await testDb().password.count()).toBe(0);
    expect(await sessionOf(phone)).not.toBeNull();
    // Ending its own session needs nothing recent: signing out is always allowed.
    const ownId = (await getSession(authRequest(get("/", { jar: thief })), { roll: false })).session!.sessionId!;
    expect(await intent(thief, { intent: "revoke-session", sessionId: ownId })).toHaveRedirect("/");
  });

  it("the owner right after signing in ends the other sessions, and is told by e-mail", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    await signedIn(user);
    expect(await intent(jar, { intent: "revoke-others" })).toHaveRedirect("/account?updated=others#devices-notice");
    expect((await queued("sessions-ended")).map((m) => m.recipient)).toEqual(["owner@example.com"]);
  });

  it("a thief with an 11-minute-old copied cookie cannot link his OAuth account, and the owner stays signed in", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    const thief = copyOf(jar);
    await ageSignIns(user.id, 11);
    const { res } = await signInThroughIdp(thief, ALICE, { callbackUrl: "/account?updated=linked&provider=oidc" });
    expect(res).toHaveErrorRedirect("ReauthRequired");
    expect(res).not.toHaveSessionCookie();
    expect(await testDb().account.count()).toBe(0);
    expect(await testDb().user.count()).toBe(1);
    await refreshRevocations();
    expect((await sessionOf(jar))?.user.email).toBe("owner@example.com");
    expect(await testDb().authEvent.count({ where: { type: "signin-failed", userId: user.id } })).toBe(1);
  });

  it("the owner right after signing in links an OAuth account, keeps this session, and is told", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    const before = await getSession(authRequest(get("/", { jar })), { roll: false });
    const { res } = await signInThroughIdp(jar, ALICE, { callbackUrl: "/account?updated=linked&provider=oidc" });
    expect(res).toHaveRedirect(`${ORIGIN}/account?updated=linked&provider=oidc`);
    expect(res).not.toHaveSessionCookie();
    expect((await testDb().account.findFirstOrThrow()).userId).toBe(user.id);
    await refreshRevocations();
    const after = await getSession(authRequest(get("/", { jar })), { roll: false });
    expect(after.session?.sessionId).toBe(before.session!.sessionId);
    expect((await queued("account-linked")).map((m) => m.recipient)).toEqual(["owner@example.com"]);
  });

  it("a session started with an unlinked provider is refused on its next read; the session that unlinked stays", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    // Link, then sign in with the provider in another browser.
    await signInThroughIdp(jar, ALICE, { callbackUrl: "/account" });
    const viaProvider = new CookieJar();
    expect((await signInThroughIdp(viaProvider, ALICE)).res).toHaveSessionCookie();
    const row = await testDb().session.findFirstOrThrow({ where: { userId: user.id, method: "oidc" } });
    expect(row.credentialRef).toMatch(/^account:/);
    expect(row.authenticatedAt).not.toBeNull();

    const res = await intent(jar, { intent: "unlink-account", provider: "oidc" });
    expect(res).toHaveRedirect("/account?updated=unlinked&provider=oidc#ways-in");
    // Another instance learns it at its next poll of the revocation list (ADR 036): one poll here.
    resetRevocations();
    await refreshRevocations();
    expect(await sessionOf(viaProvider)).toBeNull();
    expect((await sessionOf(jar))?.user.email).toBe("owner@example.com");
    expect((await queued("account-unlinked")).map((m) => m.recipient)).toEqual(["owner@example.com"]);
  });

  it("unlinking the provider this very session signed in with ends this session too", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    await signInThroughIdp(jar, ALICE, { callbackUrl: "/account" });
    const viaProvider = new CookieJar();
    await signInThroughIdp(viaProvider, ALICE);
    const res = await intent(viaProvider, { intent: "unlink-account", provider: "oidc" });
    expect(res).toHaveRedirect("/auth/signin?notice=SignInMethodRemoved&callbackUrl=%2Faccount");
    expect(await sessionOf(viaProvider)).toBeNull();
    expect((await sessionOf(jar))?.user.email).toBe("owner@example.com");
  });

  it("a visitor who removes the passkey this session signed in with is told on the sign-in page why this device was signed out", async () => {
    const user = await owner();
    const passkey = await testDb().passkey.create({
      data: { userId: user.id, credentialId: "cred-1", publicKey: "pk", counter: 0n, deviceType: "multiDevice", name: "Phone" },
    });
    const viaPasskey = new CookieJar();
    viaPasskey.apply(await createSession(authRequest(get("/")), user, { method: "passkey", credentialRef: `passkey:${passkey.id}` }));
    const res = await intent(viaPasskey, { intent: "passkey-remove", passkeyId: passkey.id });
    expect(res).toHaveRedirect("/auth/signin?notice=SignInMethodRemoved&callbackUrl=%2Faccount");
    expect(await sessionOf(viaPasskey)).toBeNull();
    const page = await (await callRoute(signinRoute.loader, get(res.headers.get("Location")!, { jar: viaPasskey }))).json();
    expect(page.notice).toBe("The way you signed in on this device was removed, so this device was signed out. Sign in another way.");
    expect(page.callbackUrl).toBe("/account");
  });

  it("removing a passkey ends the sessions it started and no other", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    const passkey = await testDb().passkey.create({
      data: { userId: user.id, credentialId: "cred-1", publicKey: "pk", counter: 0n, deviceType: "multiDevice", name: "Phone" },
    });
    // A browser signed in with that passkey (the strategy records it: tests/integration/passkeys).
    const viaPasskey = new CookieJar();
    viaPasskey.apply(await createSession(authRequest(get("/")), user, { method: "passkey", credentialRef: `passkey:${passkey.id}` }));
    const res = await intent(jar, { intent: "passkey-remove", passkeyId: passkey.id });
    expect(res).toHaveRedirect("/account?updated=passkey-removed#passkeys");
    resetRevocations();
    await refreshRevocations();
    expect(await sessionOf(viaPasskey)).toBeNull();
    expect((await sessionOf(jar))?.user.email).toBe("owner@example.com");
    const [notice] = await queued("passkey-removed");
    expect(JSON.parse(notice!.payload).text).toContain('"Phone"');
  });

  it("a thief with an old copied cookie cannot remove the owner's passkey nor unlink his provider, so cannot sign the owner's devices out (form and JSON)", async () => {
    const user = await owner();
    const thief = copyOf(await signedIn(user));
    const passkey = await testDb().passkey.create({
      data: { userId: user.id, credentialId: "cred-1", publicKey: "pk", counter: 0n, deviceType: "multiDevice", name: "Phone" },
    });
    const account = await testDb().account.create({ data: { userId: user.id, type: "oidc", provider: "oidc", providerAccountId: "owner-sub" } });
    // The owner's phone signed in with the passkey, the laptop with the provider.
    const phone = new CookieJar();
    phone.apply(await createSession(authRequest(get("/")), user, { method: "passkey", credentialRef: `passkey:${passkey.id}` }));
    const laptop = new CookieJar();
    laptop.apply(await createSession(authRequest(get("/")), user, { method: "oidc", credentialRef: `account:${account.id}` }));
    await ageSignIns(user.id, 11);
    await expectReauthForm(await intent(thief, { intent: "passkey-remove", passkeyId: passkey.id }));
    await expectReauthForm(await intent(thief, { intent: "unlink-account", provider: "oidc" }));
    const removals: Record<string, string>[] = [{ intent: "passkey-remove", passkeyId: passkey.id }, { intent: "unlink-account", provider: "oidc" }];
    for (const fields of removals) {
      const json = await intent(thief, fields, { json: true });
      expect(json.status).toBe(403);
      expect(await json.json()).toEqual({ error: "ReauthRequired", url: REAUTH_URL });
    }
    expect(await testDb().passkey.count({ where: { userId: user.id } })).toBe(1);
    expect(await testDb().account.count({ where: { userId: user.id } })).toBe(1);
    resetRevocations();
    await refreshRevocations();
    expect(await sessionOf(phone)).not.toBeNull();
    expect(await sessionOf(laptop)).not.toBeNull();
    expect(await queued()).toHaveLength(0);
  });

  it("an app route's requireRecentAuth passes the owner right after sign-in and refuses the thief's old copy with the JSON 403", async () => {
    const user = await owner();
    const jar = await signedIn(user);
    const thief = copyOf(jar);
    expect((await requireRecentAuth(get("/app/transfer", { jar }))).user.id).toBe(user.id);
    await ageSignIns(user.id, 11);
    const refused = await requireRecentAuth(get("/app/transfer?x=1", { jar: thief })).catch((thrown: unknown) => thrown);
    expect(refused).toBeInstanceOf(Response);
    expect((refused as Response).status).toBe(403);
    expect(await (refused as Response).json()).toEqual({ error: "ReauthRequired", url: `${ORIGIN}/auth/reauth?callbackUrl=%2Fapp%2Ftransfer%3Fx%3D1` });
    // A longer window of its own lets it through.
    expect((await requireRecentAuth(get("/app/transfer", { jar: thief }), { maxAge: 3600 })).user.id).toBe(user.id);
    // Signed out: the usual sign-in redirect.
    const signedOut = await requireRecentAuth(get("/app/transfer")).catch((thrown: unknown) => thrown);
    expect((signedOut as Response).headers.get("Location")).toMatch(/^\/auth\/signin\?error=SessionRequired/);
  });

  it("AUTH_SECURITY_EMAILS=false queues nothing", async () => {
    configure({ AUTH_SECURITY_EMAILS: "false" });
    const user = await owner();
    const jar = await signedIn(user);
    await signedIn(user);
    expect(await intent(jar, { intent: "revoke-others" })).toHaveRedirect("/account?updated=others#devices-notice");
    expect(await queued()).toHaveLength(0);
  });
});

describe(`the security e-mail queue (${dbLabel})`, () => {
  beforeEach(() => {
    configure(smtpEnv(smtp.sink.url));
  });

  it("two claimers never send one queued mail twice", async () => {
    // Six due rows, written as another instance would (this one's sender is not woken).
    for (let i = 0; i < 6; i++) {
      await testDb().mailQueue.create({
        data: { recipient: `owner${i}@example.com`, kind: "password-changed", payload: JSON.stringify({ subject: `Notice ${i}`, text: "Your password was changed.", html: "<p>Your password was changed.</p>" }) },
      });
    }
    // Four senders (as many instances) racing for the same rows.
    const rounds = await Promise.all([sendDueMail(), sendDueMail(), sendDueMail(), sendDueMail()]);
    await mailSenderIdle();
    const sentByRounds = rounds.reduce((n, r) => n + r.sent, 0);
    const rows = await queued("password-changed");
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.sentAt !== null && r.attempts === 1)).toBe(true);
    expect(smtp.sink.messages.map((m) => m.subject).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `Notice ${i}`));
    expect(sentByRounds).toBe(6);
  });

  it("a sender slowed by the mail server past its claim does not send again the rows another instance claimed and sent meanwhile", async () => {
    // Only the two senders below: this process's own timer would be a third claimer.
    stopMailSender();
    await mailSenderIdle();
    for (const i of [1, 2]) {
      await testDb().mailQueue.create({
        data: { recipient: `owner${i}@example.com`, kind: "password-changed", payload: JSON.stringify({ subject: `Notice ${i}`, text: "Changed.", html: "<p>Changed.</p>" }) },
      });
    }
    const mailer = getMailer(getConfig())!;
    const send = mailer.send.bind(mailer);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    let hung = "";
    const spy = vi.spyOn(mailer, "send").mockImplementation(async (message) => {
      // The slow instance's first delivery hangs until the other instance has done its round.
      if (++calls === 1) {
        hung = message.subject;
        await released;
      }
      return send(message);
    });
    try {
      // Instance one claims both rows (a claim that runs out within a second), then its first send hangs.
      const slow = sendDueMail(new Date(), { claimMs: 1 });
      await expect.poll(() => calls).toBe(1);
      await expect
        .poll(async () => (await queued("password-changed")).every((r) => r.claimedUntil !== null && r.claimedUntil.getTime() < Date.now()), { timeout: 5_000 })
        .toBe(true);
      // Instance two finds both claims run out: it claims and sends both.
      expect((await sendDueMail()).sent).toBe(2);
      release();
      await slow;
      const subjects = smtp.sink.messages.map((m) => m.subject);
      // The hung delivery itself outlasted its claim (the claim must outlast one delivery): it
      // arrives twice. The row after it, which instance two claimed and sent, is not sent again.
      const after = hung === "Notice 1" ? "Notice 2" : "Notice 1";
      expect(subjects.filter((s) => s === after)).toHaveLength(1);
      expect((await queued("password-changed")).every((r) => r.sentAt !== null)).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it("a mail server outage delays a security e-mail but does not lose it", async () => {
    const user = await owner();
    smtp.sink.reject("rcpt", 451);
    const ar = authRequest(get("/"));
    const { notifySecurityChange } = await import("../../../app/auth/accounts/security-notices.server.ts");
    await notifySecurityChange(ar, user.id, { kind: "second-factor-off" });
    await mailSenderIdle();
    const [failed] = await queued("second-factor-off");
    expect(failed).toMatchObject({ sentAt: null, attempts: 1 });
    expect(failed!.lastError).toBeTruthy();
    expect(failed!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now());
    // Not due yet: a round now sends nothing.
    expect((await sendDueMail()).sent).toBe(0);
    smtp.sink.reject(null);
    // When it is due (the clock moved on), the next round sends it.
    expect((await sendDueMail(new Date(failed!.nextAttemptAt.getTime() + 1))).sent).toBe(1);
    const [sent] = await queued("second-factor-off");
    expect(sent).toMatchObject({ attempts: 2, lastError: null });
    expect(sent!.sentAt).not.toBeNull();
    expect(smtp.sink.messages.map((m) => m.subject)).toEqual([expect.stringMatching(/Two-step sign-in was turned off/)]);
  });
});
