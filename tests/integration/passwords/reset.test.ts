// Forgotten password: always the same answer, a one-hour link and a code for
// an existing user only, single use; a refused password uses no link up (a code's try: ADR 103); success ends every
// session of the user and signs this browser in.
import { describe, expect, it } from "vitest";
import * as account from "../../../app/routes/account.tsx";
import * as errorRoute from "../../../app/routes/auth/error.tsx";
import * as verifyRequest from "../../../app/routes/auth/verify-request.tsx";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import { configure, ORIGIN, sessionOf, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { askReset, codeIn, forgotPassword, isResetRefusal, median, openResetPage, postReset, resetRefusalOf, setCookieNames, signUp, typeCode } from "./helpers.ts";
import { requestLink } from "../email/helpers.ts";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import { retryAfterMinutes } from "../../../app/auth/core/limit-table.ts";

const smtp = useSmtpSink();

/** The sign-in page's "Forgot your password?" button: intent=start with the typed address. */
async function askResetStart(jar: CookieJar, email: string) {
  const res = await callRoute(forgotPassword.action, post("/auth/forgot-password", { intent: "start", email }, { jar }));
  jar.apply(res);
  return res;
}
const NEW = "velvet lantern orbit";
const VERIFY = `${ORIGIN}/auth/verify-request?provider=email&type=reset`;

async function asked(email = "ada@example.com", jar = new CookieJar()) {
  // Security e-mails queued before (a password change's) are out first: the newest message is the reset's.
  await mailSenderIdle();
  const before = smtp.sink.messages.length;
  const res = await askReset(jar, email);
  const message = (await smtp.sink.waitFor(before + 1)).at(-1)!;
  return { jar, res, message, link: linkIn(message), code: codeIn(message) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe(`forgotten password (${dbLabel})`, () => {
  it("an existing user gets a one-hour link to /auth/reset-password and a code; the answer is 302 to verify-request?type=reset", async () => {
    await createUser();
    const { res, message, link } = await asked();
    expect(res).toHaveRedirect(VERIFY);
    expect(message.envelope.to).toEqual(["ada@example.com"]);
    expect(link.pathname).toBe("/auth/reset-password");
    expect([...link.searchParams.keys()]).toEqual(["token", "email"]);
    expect(message.text).toContain("1 hour");
    const row = await testDb().verificationToken.findFirstOrThrow();
    expect(row.purpose).toBe("reset");
    expect(Math.abs(row.expires.getTime() - row.createdAt.getTime() - 3600_000)).toBeLessThan(5_000);
  });

  it("cannot tell whether an address has an account: same status, Location and Set-Cookie names; only the user is mailed; same time within noise", async () => {
    await createUser();
    const known = await askReset(new CookieJar(), "ada@example.com");
    const unknown = await askReset(new CookieJar(), "nobody@example.com");
    expect(known.status).toBe(302);
    expect(known.headers.get("Location")).toBe(unknown.headers.get("Location"));
    expect(setCookieNames(known)).toEqual(setCookieNames(unknown));
    await smtp.sink.waitFor(1);
    await settle();
    expect(smtp.sink.messages.map((m) => m.envelope.to[0])).toEqual(["ada@example.com"]);

    const runs = 15;
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < runs; i++) {
      for (const kind of ["known", "unknown"] as const) {
        const jar = new CookieJar();
        await fetchCsrf(jar);
        const started = performance.now();
        const res = await askReset(jar, kind === "known" ? "ada@example.com" : `nobody-${i}@example.com`, { csrf: undefined });
        times[kind].push(performance.now() - started);
        expect(res.status).toBe(302);
      }
      await testDb().limitCounter.deleteMany();
    }
    const k = median(times.known);
    const u = median(times.unknown);
    // Every known address's e-mail went out (after its answer); nothing for the others.
    await smtp.sink.waitFor(1 + runs);
    await settle();
    expect(smtp.sink.messages).toHaveLength(1 + runs);
    console.log(`forgot-password timing (${dbLabel}, ${runs} runs each): known median ${k.toFixed(1)} ms, unknown median ${u.toFixed(1)} ms, difference ${(k - u).toFixed(1)} ms`);
    expect(Math.abs(k - u)).toBeLessThan(Math.max(15, 0.5 * Math.max(k, u)));
  });

  it("GET with a live link shows the form without using it; a bad, foreign or used link is Verification", async () => {
    await createUser();
    const { link } = await asked();
    const page = await openResetPage(link);
    expect(page.status).toBe(200);
    expect(((await page.json()) as { values: unknown }).values).toMatchObject({ email: "ada@example.com", token: link.searchParams.get("token") });
    expect((await openResetPage(link)).status).toBe(200);
    const foreign = new URL(link);
    foreign.searchParams.set("email", "eve@example.com");
    expect(await openResetPage(foreign)).toHaveErrorRedirect("Verification");
    const bad = new URL(link);
    bad.searchParams.set("token", "0".repeat(64));
    expect(await openResetPage(bad)).toHaveErrorRedirect("Verification");
  });

  it("a refused password comes back to the link's page, which says why, and uses nothing up; the right one sets it, ends every session, signs this browser in, lands on /account", async () => {
    await createUser();
    const { jar: phone } = await signIn();
    const { jar: laptop } = await signIn();
    const { link } = await asked();
    const token = link.searchParams.get("token")!;
    const browser = new CookieJar();
    const weak = await postReset(browser, { token, email: "ada@example.com", password: "passwordpassword" });
    // Back to the link's own page (Post/Redirect/Get), the reason named; the password is in no URL.
    expect(weak).toHaveRedirect(`${ORIGIN}/auth/reset-password?${new URLSearchParams({ token, email: "ada@example.com", refused: "password", reason: "tooCommon" })}`);
    expect(weak.headers.get("Location")).not.toContain("passwordpassword");
    expect((await resetRefusalOf(browser, weak)).password).toMatch(/too common/);
    // The reset link is still there (the sign-ins' notices hold "This wasn't me" links besides: ADR 081).
    expect(await testDb().verificationToken.count({ where: { purpose: "reset" } })).toBe(1);

    const res = await postReset(browser, { token, email: "ada@example.com", password: NEW });
    expect(res).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect(res).toHaveSessionCookie();
    expect((await sessionOf(browser))?.user.email).toBe("ada@example.com");
    expect(await sessionOf(phone)).toBeNull();
    expect(await sessionOf(laptop)).toBeNull();
    expect((await signIn(new CookieJar(), "ada@example.com", PASSWORD)).res).toHaveErrorRedirect("CredentialsSignin");
    expect((await signIn(new CookieJar(), "ada@example.com", NEW)).res).toHaveSessionCookie();
    // Single use.
    expect(await postReset(new CookieJar(), { token, email: "ada@example.com", password: "another fine phrase" })).toHaveErrorRedirect("Verification");
    expect(await openResetPage(link)).toHaveErrorRedirect("Verification");
  });

  it("a reset by link or by code proves the address: an unverified address is marked verified with the new password", async () => {
    const user = await createUser();
    await testDb().user.update({ where: { id: user.id }, data: { emailVerified: null } });
    const byLink = await asked();
    const token = byLink.link.searchParams.get("token")!;
    expect(await postReset(new CookieJar(), { token, email: "ada@example.com", password: NEW })).toHaveSessionCookie();
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).emailVerified).not.toBeNull();

    await testDb().user.update({ where: { id: user.id }, data: { emailVerified: null } });
    const byCode = await asked();
    expect(await postReset(byCode.jar, { code: byCode.code!, password: "another fine passphrase" })).toHaveSessionCookie();
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).emailVerified).not.toBeNull();
  });

  it("a visitor who signed up and asked for four sign-in links presses Forgot password: she reads that several e-mails went to the address, never 'too many attempts', in en/de/fr/ar", async () => {
    const jar = new CookieJar();
    await signUp(jar, { email: "busy@example.com", password: "a long and quiet harbour at dawn" });
    for (let i = 0; i < 4; i++) expect((await requestLink(jar, { email: "busy@example.com" })).status).toBe(302);
    await smtp.sink.waitFor(5);
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const res = await runWithLocale(locale, () => askReset(jar, "busy@example.com"));
      expect(res.status).toBe(429);
      const minutes = retryAfterMinutes(Number(res.headers.get("Retry-After")));
      const { formError } = (await res.json()) as { formError: string };
      expect(formError).toBe(runWithLocale(locale, () => t("limit.address", { minutes })));
      expect(formError).not.toBe(runWithLocale(locale, () => t("error.RateLimited", { minutes })));
    }
    expect(await runWithLocale("en", () => t("limit.address", { minutes: 52 }))).toBe(
      "We have sent several e-mails to this address recently. Check your inbox, or try again in 52 minutes.",
    );
  });

  it("a visitor who reset her password lands on /account and reads that the password was changed, in en/de/fr/ar, as after every other change", async () => {
    await createUser();
    const { jar, code } = await asked();
    const ok = await postReset(jar, { code, password: NEW });
    expect(ok).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    const landing = new URL(ok.headers.get("Location")!);
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const page = await runWithLocale(locale, () => callRoute(account.loader, get(landing.pathname + landing.search, { jar })));
      expect(((await page.json()) as { notice: string | null }).notice).toBe(runWithLocale(locale, () => t("password.noticeReset")));
    }
    expect(runWithLocale("en", () => t("password.noticeReset"))).toMatch(/^Your password was changed\./);
  });

  it("a visitor who opens her used password-reset link reads that the password-reset link (not a 'sign in link') can no longer be used, with the way to ask for a new one, in en/de/fr/ar", async () => {
    await createUser();
    const { jar, code, link } = await asked();
    expect(await postReset(jar, { code, password: NEW })).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    const dead = await openResetPage(link);
    expect(dead).toHaveErrorRedirect("Verification");
    const target = new URL(dead.headers.get("Location")!);
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const res = await runWithLocale(locale, () => callRoute(errorRoute.loader, get(target.pathname + target.search)));
      expect(res.status).toBe(403);
      const page = (await res.json()) as { heading: string; message: string; detail: string; next: { href: string; label: string } | null };
      runWithLocale(locale, () => {
        expect(page.heading).toBe(t("errorPage.VerificationReset.heading"));
        expect(page.message).toBe(t("errorPage.VerificationReset.message"));
        expect(page.next).toEqual({ href: "/auth/forgot-password", label: t("errorPage.VerificationReset.next") });
      });
      expect(page.message).not.toBe(runWithLocale(locale, () => t("errorPage.Verification.message")));
    }
  });

  it("'Forgot your password?' on the sign-in page carries the address just typed in its POST (no URL keeps it): the form comes back filled, nothing is sent", async () => {
    await createUser();
    const jar = new CookieJar();
    const res = await askResetStart(jar, "ada@example.com");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { values: { email: string }; formError: string | null }).values.email).toBe("ada@example.com");
    await mailSenderIdle();
    expect(smtp.sink.messages).toHaveLength(0);
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("a visitor with an Arabic keyboard types the reset code in Arabic-Indic digits: the password is set", async () => {
    await createUser();
    const { jar, code, link } = await asked();
    const arabic = [...code].map((d) => String.fromCodePoint(0x0660 + Number(d))).join("");
    const ok = await postReset(jar, { code: arabic, password: NEW });
    expect(ok).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect(jar.get("authjs.email-code")).toBeUndefined();
    expect(await openResetPage(link)).toHaveErrorRedirect("Verification");
  });

  it("the code form in the asking browser: verify-request shows it; code + password resets; a wrong code comes back to the code form, which says why; another browser's code is Verification", async () => {
    await createUser();
    const { jar, code, link } = await asked();
    const page = await callRoute(verifyRequest.loader, get("/auth/verify-request?provider=email&type=reset", { jar }));
    expect(((await page.json()) as { codeForm: { action: string; withPassword: boolean } }).codeForm).toMatchObject({
      action: "/auth/reset-password",
      withPassword: true,
    });
    expect(await postReset(new CookieJar(), { code, password: NEW })).toHaveErrorRedirect("Verification");
    const wrong = await postReset(jar, { code: code === "000000" ? "000001" : "000000", password: NEW });
    expect(wrong).toHaveRedirect(`${ORIGIN}/auth/verify-request?provider=email&type=reset&refused=wrong&tries=4`);
    expect(await resetRefusalOf(jar, wrong)).toMatchObject({ code: expect.stringMatching(/4 tries are left/), password: null });
    // The code is proved before the password is judged (ADR 103): a refused password costs a try.
    const short = await postReset(jar, { code, password: "short" });
    expect(short.headers.get("Location")).not.toContain(code);
    expect(await resetRefusalOf(jar, short)).toMatchObject({ code: null, password: expect.stringMatching(/at least 15/), minLength: 15 });
    expect((await testDb().verificationToken.findFirstOrThrow()).codeAttempts).toBe(2);
    const ok = await postReset(jar, { code, password: NEW });
    expect(ok).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect(jar.get("authjs.email-code")).toBeUndefined();
    // Link and code end together.
    expect(await openResetPage(link)).toHaveErrorRedirect("Verification");
  });

  it("an outsider who asks two resets for Ada's address and posts five wrong codes on each does not block her own right codes: her sign-in code signs her in, her reset code sets her password", async () => {
    await createUser();
    // Two requests of the outsider's, five wrong codes each: the address's budget of ten is spent.
    for (let i = 0; i < 2; i++) {
      const outsider = await asked();
      const wrong = outsider.code === "000000" ? "000001" : "000000";
      for (let n = 0; n < 4; n++) expect(isResetRefusal(await postReset(outsider.jar, { code: wrong, password: NEW }))).toBe(true);
      expect(await postReset(outsider.jar, { code: wrong, password: NEW })).toHaveErrorRedirect("Verification");
    }
    // Ada, in her own browser: the code of her sign-in e-mail.
    const browser = new CookieJar();
    await mailSenderIdle();
    const before = smtp.sink.messages.length;
    await requestLink(browser, { email: "ada@example.com", callbackUrl: "/account" });
    const signInCode = codeIn((await smtp.sink.waitFor(before + 1)).at(-1)!);
    expect(await typeCode(browser, signInCode)).toHaveSessionCookie();
    expect((await sessionOf(browser))?.user.email).toBe("ada@example.com");
    // And the code of her own reset e-mail.
    const mine = await asked();
    expect(await postReset(mine.jar, { code: mine.code, password: NEW })).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
  });

  it("a POST without a valid CSRF token is a 403 that uses nothing up", async () => {
    await createUser();
    const { jar, link, code } = await asked();
    const token = link.searchParams.get("token")!;
    expect((await postReset(jar, { token, email: "ada@example.com", password: NEW }, { csrf: null })).status).toBe(403);
    expect((await postReset(jar, { code, password: NEW }, { csrf: "b".repeat(64) })).status).toBe(403);
    expect((await askReset(new CookieJar(), "ada@example.com", { csrf: null })).status).toBe(403);
    const row = await testDb().verificationToken.findFirstOrThrow();
    expect(row.codeAttempts).toBe(0);
    expect(await testDb().verificationToken.count()).toBe(1);
    await settle();
    expect(smtp.sink.messages).toHaveLength(1);
  });

  it("the honest user: a reset after a password change works, and the old reset link of before does not outlive a new one's use", async () => {
    await createUser();
    const { jar } = await signIn();
    const csrfToken = await fetchCsrf(jar);
    const changed = await callRoute(account.action, post("/account", { csrfToken, intent: "password-change", currentPassword: PASSWORD, password: "first new phrase" }, { jar }));
    expect(changed).toHaveRedirect("/account?updated=password-changed#password-notice");
    const { link } = await asked();
    const res = await postReset(new CookieJar(), { token: link.searchParams.get("token")!, email: "ada@example.com", password: NEW });
    expect(res).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect((await signIn(new CookieJar(), "ada@example.com", NEW)).res).toHaveSessionCookie();
  });

  it("a visitor locked out by wrong passwords resets hers: the new password signs her in at once, from the same browser", async () => {
    await createUser();
    let locked: Response | null = null;
    for (let i = 0; i < 10 && !locked; i++) {
      const { res } = await signIn(new CookieJar(), "ada@example.com", `wrong guess ${i}`);
      if (new URL(res.headers.get("Location")!).searchParams.get("error") === "RateLimited") locked = res;
    }
    expect(locked).not.toBeNull();
    expect((await signIn(new CookieJar(), "ada@example.com", PASSWORD)).res).toHaveErrorRedirect("RateLimited");
    const { link } = await asked();
    const res = await postReset(new CookieJar(), { token: link.searchParams.get("token")!, email: "ada@example.com", password: NEW });
    expect(res).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect((await signIn(new CookieJar(), "ada@example.com", NEW)).res).toHaveSessionCookie();
  });

  it("a user who has no password yet (e-mail sign-in only) sets one by reset", async () => {
    await testDb().user.create({ data: { email: "link@example.com", emailVerified: new Date() } });
    const { link } = await asked("link@example.com");
    const res = await postReset(new CookieJar(), { token: link.searchParams.get("token")!, email: "link@example.com", password: NEW });
    expect(res).toHaveRedirect(`${ORIGIN}/account?updated=password-reset`);
    expect((await signIn(new CookieJar(), "link@example.com", NEW)).res).toHaveSessionCookie();
  });

  it("is not offered without credentials sign-in", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_CREDENTIALS: "false" }));
    expect((await askReset(new CookieJar(), "ada@example.com")).status).toBe(400);
  });
});
