// What a reset or a password change ends, and when: every pending link and
// code of the user goes in the same transaction that writes the password, so an older reset link
// cannot set the password again and sign the owner out; with the second factor on, the code is
// asked before anything is written, so the mailbox alone signs nobody out.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { verifyPassword } from "../../../app/auth/credentials/password.server.ts";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { accountIntent, advance, codeAt, enrolled, PENDING, submitCode, useStepClock } from "../two-factor/helpers.ts";
import { ORIGIN, requestLink, sessionOf, useSmtpSink } from "../email/helpers.ts";
import { askReset, codeIn, postReset } from "./helpers.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";

const smtp = useSmtpSink();
const NEW = "velvet lantern orbit";
beforeEach(() => useStepClock());
afterEach(() => vi.useRealTimers());

async function resetMail(email = "ada@example.com", jar = new CookieJar()) {
  // Security notices of the setup (the second factor turned on) go out first, so the last
  // message is the reset's own.
  await mailSenderIdle();
  const before = smtp.sink.messages.length;
  expect((await askReset(jar, email)).status).toBe(302);
  const message = (await smtp.sink.waitFor(before + 1)).at(-1)!;
  const link = linkIn(message);
  return { jar, link, code: codeIn(message), byLink: { token: link.searchParams.get("token")!, email } };
}

async function signInMail(email = "ada@example.com") {
  await mailSenderIdle();
  const before = smtp.sink.messages.length;
  await requestLink(new CookieJar(), { email });
  return linkIn((await smtp.sink.waitFor(before + 1)).at(-1)!);
}

/** Pending sign-in, sign-up, reset and address-change links: not the notices' "This wasn't me" links (ADR 081), which stay. */
const pendingLinks = () => testDb().verificationToken.count({ where: { NOT: { purpose: { startsWith: "wasnt-me:" } } } });

const passwordOf = async (email = "ada@example.com") =>
  (await testDb().user.findUniqueOrThrow({ where: { email }, include: { password: true } })).password!.hash;

describe(`a reset or a password change ends every pending link and code of the user (${dbLabel})`, () => {
  it("an attacker holding an older reset link cannot set the password again after the owner's reset, nor sign her out", async () => {
    await createUser();
    const older = await resetMail();
    const signInLink = await signInMail();
    const newer = await resetMail();
    const owner = new CookieJar();
    expect(await postReset(owner, { ...newer.byLink, password: NEW })).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect(await pendingLinks()).toBe(0);

    const attacker = new CookieJar();
    expect(await postReset(attacker, { ...older.byLink, password: "attacker chosen phrase" })).toHaveErrorRedirect("Verification");
    expect(await postReset(older.jar, { code: older.code, password: "attacker chosen phrase" })).toHaveErrorRedirect("Verification");
    const { openLink } = await import("../email/helpers.ts");
    expect(await openLink(signInLink, attacker)).toHaveErrorRedirect("Verification");
    expect(await verifyPassword(await passwordOf(), NEW)).toBe(true);
    expect((await sessionOf(owner))?.user.email).toBe("ada@example.com");
  });

  it("a password change from /account ends the pending sign-in link, reset link and code, and address change", async () => {
    await createUser();
    const { jar } = await signIn();
    const reset = await resetMail();
    const signInLink = await signInMail();
    expect((await accountIntent(jar, { intent: "change-email", email: "new-ada@example.com" })).status).toBeLessThan(400);
    expect(await pendingLinks()).toBe(3);
    const changed = await accountIntent(jar, { intent: "password-change", currentPassword: PASSWORD, password: NEW });
    expect(changed).toHaveRedirect("/account?updated=password-changed#password-notice");
    expect(await pendingLinks()).toBe(0);
    expect(await postReset(new CookieJar(), { ...reset.byLink, password: "another fine phrase" })).toHaveErrorRedirect("Verification");
    const { openLink } = await import("../email/helpers.ts");
    expect(await openLink(signInLink)).toHaveErrorRedirect("Verification");
    expect((await sessionOf(jar))?.user.email).toBe("ada@example.com");
  });

  it("another user's pending links are untouched", async () => {
    await createUser();
    await createUser("bob@example.com", "Bob");
    await resetMail("bob@example.com");
    const mine = await resetMail();
    expect(await postReset(new CookieJar(), { ...mine.byLink, password: NEW })).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect(await testDb().verificationToken.count({ where: { identifier: "bob@example.com" } })).toBe(1);
  });
});

describe(`a reset for a user with the second factor on asks the code before writing anything (${dbLabel})`, () => {
  for (const path of ["link", "code"] as const) {
    for (const json of [false, true]) {
      it(`someone who read only the mailbox (${path}, ${json ? "JSON" : "form"}) changes nothing and signs nobody out; the owner's code then sets it`, async () => {
        await createUser();
        const { jar: owner, secret } = await enrolled();
        const before = await passwordOf();
        const mail = await resetMail();
        const browser = path === "link" ? new CookieJar() : mail.jar;
        const fields: Record<string, string> = path === "link" ? { ...mail.byLink, password: NEW } : { code: mail.code, password: NEW };
        const res = await postReset(browser, json ? { ...fields, json: "true" } : fields);
        if (json) {
          expect(res.status).toBe(200);
          expect(await res.json()).toEqual({ url: `${ORIGIN}/auth/two-factor` });
        } else expect(res).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
        expect(res).not.toHaveSessionCookie();
        // Nothing written yet: the password, the owner's session.
        expect(await passwordOf()).toBe(before);
        expect((await sessionOf(owner))?.user.email).toBe("ada@example.com");
        expect(JSON.stringify(await testDb().authEvent.findMany({ where: { type: "password-reset" } }))).toBe("[]");

        const done = await submitCode(browser, codeAt(secret), { json });
        if (json) expect(((await done.json()) as { url: string }).url).toBe(`${ORIGIN}/account?updated=password-reset`);
        else expect(done).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
        expect(done).toHaveSessionCookie();
        expect(await verifyPassword(await passwordOf(), NEW)).toBe(true);
        expect(await sessionOf(owner)).toBeNull();
        expect((await sessionOf(browser))?.user.email).toBe("ada@example.com");
      });
    }
  }

  it("wrong second-factor codes until the pending step ends: the password and every session stay as they were", async () => {
    await createUser();
    const { jar: owner, secret } = await enrolled();
    const before = await passwordOf();
    const mail = await resetMail();
    const browser = new CookieJar();
    expect(await postReset(browser, { ...mail.byLink, password: NEW })).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    const wrong = codeAt(secret) === "000000" ? "000001" : "000000";
    for (let i = 0; i < 5; i++) await submitCode(browser, wrong);
    expect(await submitCode(browser, codeAt(secret))).not.toHaveSessionCookie();
    expect(await passwordOf()).toBe(before);
    expect((await sessionOf(owner))?.user.email).toBe("ada@example.com");
  });

  it("an attacker who copied the pending reset cookie replays it with a fresh code after the owner finished: nothing is written again, nobody signed in", async () => {
    await createUser();
    const { secret } = await enrolled();
    const mail = await resetMail();
    const browser = new CookieJar();
    expect(await postReset(browser, { ...mail.byLink, password: NEW })).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    const copied = new CookieJar({ [PENDING]: browser.get(PENDING)! });
    expect(await submitCode(browser, codeAt(secret))).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    // The owner then changes it again; the sealed hash of the reset must not come back.
    const later = "amber signal meadow";
    expect(await accountIntent(browser, { intent: "password-change", currentPassword: NEW, password: later })).toHaveRedirect("/account?updated=password-changed#password-notice");
    advance(30);
    const replayed = await submitCode(copied, codeAt(secret));
    expect(replayed).not.toHaveSessionCookie();
    expect(await verifyPassword(await passwordOf(), later)).toBe(true);
    expect((await sessionOf(browser))?.user.email).toBe("ada@example.com");
  });
});
