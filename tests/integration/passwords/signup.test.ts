// Sign-up with a verified address, through the real routes, the SMTP sink
// and the database: no user before the address is proved; an existing address is told by e-mail
// and never touched; the answer is the same for both kinds of address.
import { describe, expect, it } from "vitest";
import { verifyPassword } from "../../../app/auth/credentials/password.server.ts";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import * as signinRoute from "../../../app/routes/auth/signin.tsx";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { renderPage, textOf } from "../../support/render-page.tsx";
import { configure, location, openLink, ORIGIN, sessionOf, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { codeIn, linksIn, median, pageOf, setCookieNames, signUp, signup, typeCode } from "./helpers.ts";

const smtp = useSmtpSink();
const CHOSEN = "velvet lantern orbit";
const VERIFY = `${ORIGIN}/auth/verify-request?provider=email&type=signup`;

async function signedUp(email = "new@example.com", extra: Record<string, string> = {}, jar = new CookieJar()) {
  const before = smtp.sink.messages.length;
  const res = await signUp(jar, { email, password: CHOSEN, name: "Nova", callbackUrl: "/account", ...extra });
  const message = res.status === 302 ? (await smtp.sink.waitFor(before + 1)).at(-1)! : null;
  return { jar, res, message };
}

describe(`sign-up (${dbLabel})`, () => {
  it("shows the form (email, name, password, callbackUrl, csrfToken) and the sign-in page links to it and to the forgotten-password page", async () => {
    const page = await pageOf(signup.loader, "/auth/signup?callbackUrl=%2Faccount");
    expect(page.status).toBe(200);
    const body = (await page.json()) as { csrfToken: string; values: { callbackUrl: string; minLength: number } };
    expect(body.csrfToken).toMatch(/^[0-9a-f]{64}$/);
    expect(body.values).toMatchObject({ callbackUrl: "/account", minLength: 15 });
    const signin = (await (await callRoute(signinRoute.loader, get("/auth/signin"))).json()) as { passwordPages: unknown };
    expect(signin.passwordPages).toEqual({ signup: true, forgotPassword: true });
  });

  it("AUTH_SIGNUP=false: /auth/signup is an unknown action (400) and the sign-in page does not link to it", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_SIGNUP: "false" }));
    expect((await pageOf(signup.loader, "/auth/signup")).status).toBe(400);
    const res = await signUp(new CookieJar(), { email: "new@example.com", password: CHOSEN });
    expect(res.status).toBe(400);
    expect(await res.json()).toBe("Bad request.");
    const signin = (await (await callRoute(signinRoute.loader, get("/auth/signin"))).json()) as { passwordPages: { signup: boolean } };
    expect(signin.passwordPages.signup).toBe(false);
    expect(smtp.sink.messages).toHaveLength(0);
  });

  it("a new address: no user until the link is used; the pending row keeps only the password's hash; the link lands on /welcome signed in", async () => {
    const { res, message, jar: asking } = await signedUp();
    expect(res).toHaveRedirect(VERIFY);
    expect(res).not.toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(0);
    const [row] = await testDb().verificationToken.findMany();
    expect(row!.purpose).toBe("signup");
    expect(row!.passwordHash).toMatch(/^\$argon2id\$/);
    expect(JSON.stringify(row)).not.toContain(CHOSEN);
    expect(row!.name).toBe("Nova");
    expect(message!.subject).toMatch(/Finish creating/);
    expect(message!.envelope.to).toEqual(["new@example.com"]);

    // In the browser that asked (elsewhere the link asks for a password: signup-prehijack.test.ts).
    const device = asking;
    const opened = await openLink(linkIn(message!), device);
    expect(opened).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "new@example.com" }, include: { password: true } });
    expect(user.emailVerified).not.toBeNull();
    expect(user.name).toBe("Nova");
    expect(await verifyPassword(user.password!.hash, CHOSEN)).toBe(true);
    expect((await sessionOf(device))?.user.email).toBe("new@example.com");
    // The password signs in from now on.
    expect((await signIn(new CookieJar(), "new@example.com", CHOSEN)).res).toHaveSessionCookie();
  });

  it("a new address: the code typed in the browser that asked finishes it the same way", async () => {
    const { jar, message } = await signedUp();
    const res = await typeCode(jar, codeIn(message!));
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(res).toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(1);
    expect(await openLink(linkIn(message!))).toHaveErrorRedirect("Verification");
  });

  it("an attacker cannot set a password on an existing account: the owner gets an 'already have an account' e-mail; nothing changes", async () => {
    const owner = await createUser("owner@example.com", "Owner");
    const before = await testDb().password.findUniqueOrThrow({ where: { userId: owner.id } });
    const { res, message, jar } = await signedUp("owner@example.com", { password: "attacker chosen phrase", name: "Mallory" });
    expect(res).toHaveRedirect(VERIFY);
    expect(message!.envelope.to).toEqual(["owner@example.com"]);
    expect(message!.subject).toMatch(/already have/);
    const links = linksIn(message!);
    expect(links[0]!.pathname).toBe("/auth/callback/email");
    expect(links.some((l) => l.pathname === "/auth/forgot-password")).toBe(true);
    expect(codeIn(message!)).toMatch(/^\d{6}$/);
    // The typed password is discarded: never stored, never set.
    expect(JSON.stringify(await testDb().verificationToken.findMany())).not.toMatch(/argon2/);
    expect((await signIn(new CookieJar(), "owner@example.com", "attacker chosen phrase")).res).toHaveErrorRedirect("CredentialsSignin");
    // The attacker's browser holds a code cookie, but without the e-mail it has nothing to type.
    // (A wrong code: back to the code form, which says how many tries are left.)
    expect((await typeCode(jar, "000000")).headers.get("Location")).toBe(`${ORIGIN}/auth/verify-request?refused=wrong&tries=4`);
    // The owner's link signs the owner in (not a new user) and changes nothing else.
    const opened = await openLink(links[0]!);
    expect(opened).toHaveRedirect(`${ORIGIN}/account`);
    const after = await testDb().user.findUniqueOrThrow({ where: { id: owner.id }, include: { password: true } });
    expect(after.password!.hash).toBe(before.hash);
    expect(after.name).toBe("Owner");
    expect((await signIn(new CookieJar(), "owner@example.com", PASSWORD)).res).toHaveSessionCookie();
  });

  it("cannot tell whether an address has an account: same status, Location, Set-Cookie names and one e-mail each; same time within noise", async () => {
    await createUser("owner@example.com");
    const known = await signedUp("owner@example.com");
    const unknown = await signedUp("nobody@example.com");
    expect(known.res.status).toBe(unknown.res.status);
    expect(known.res.headers.get("Location")).toBe(unknown.res.headers.get("Location"));
    expect(setCookieNames(known.res)).toEqual(setCookieNames(unknown.res));
    expect(setCookieNames(known.res)).toContain("authjs.email-code");
    expect(smtp.sink.messages.map((m) => m.envelope.to[0])).toEqual(["owner@example.com", "nobody@example.com"]);

    // Timing: alternate known and unknown addresses, compare the medians.
    const runs = 12;
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < runs; i++) {
      for (const kind of ["known", "unknown"] as const) {
        const email = kind === "known" ? "owner@example.com" : `nobody-${i}@example.com`;
        const jar = new CookieJar();
        await signUp(jar, { email: "warm@example.com", password: "x" }); // warms the CSRF cookie (a 400)
        const started = performance.now();
        const res = await signUp(jar, { email, password: CHOSEN, callbackUrl: "/" });
        times[kind].push(performance.now() - started);
        expect(res.status).toBe(302);
      }
      // The limits are per address and client: keep the known address under its hourly budget.
      await testDb().limitCounter.deleteMany();
    }
    const k = median(times.known);
    const u = median(times.unknown);
    console.log(`sign-up timing (${dbLabel}, ${runs} runs each): known median ${k.toFixed(1)} ms, unknown median ${u.toFixed(1)} ms, difference ${(k - u).toFixed(1)} ms`);
    expect(Math.abs(k - u)).toBeLessThan(Math.max(25, 0.35 * Math.max(k, u)));
  });

  it("a visitor who chooses 'aaaaaaaaaaaaaaaaaaaa' (or a sequence, or a row of keys) under the hint that promises common passwords are refused is refused at the password field, in en/de/fr/ar; nothing is sent", async () => {
    for (const [locale, password] of [["en", "aaaaaaaaaaaaaaaaaaaa"], ["de", "abcdefghijklmnopqrst"], ["fr", "azertyuiopazertyuiop"], ["ar", "1234567890123456"]] as const) {
      const res = await runWithLocale(locale, () => signUp(new CookieJar(), { email: "new@example.com", password }));
      expect(res.status, password).toBe(400);
      const body = (await res.json()) as { fieldErrors: Record<string, string> };
      expect(body.fieldErrors.password, password).toMatch(/^.+$/);
      expect([runWithLocale(locale, () => t("password.simplePattern")), runWithLocale(locale, () => t("password.tooCommon"))]).toContain(body.fieldErrors.password);
    }
    const plain = await signUp(new CookieJar(), { email: "new@example.com", password: "aaaaaaaaaaaaaaaaaaaa" });
    expect(((await plain.json()) as { fieldErrors: Record<string, string> }).fieldErrors.password).toBe(
      "This password is a simple pattern — one character repeated, a sequence such as “abcdef” or “123456”, or a row of keys — and is easy to guess. Choose another one, such as a few unrelated words.",
    );
    expect(await testDb().verificationToken.count()).toBe(0);
    expect(smtp.sink.messages).toHaveLength(0);
  });

  it("a refused password or address is the same 400 for known and unknown addresses, keeps what was typed and never echoes the password", async () => {
    await createUser("owner@example.com");
    for (const email of ["owner@example.com", "nobody@example.com"]) {
      const res = await signUp(new CookieJar(), { email, password: "passwordpassword", name: "Kim" });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { fieldErrors: Record<string, string>; values: Record<string, unknown> };
      expect(body.fieldErrors).toEqual({ password: expect.stringMatching(/too common/) });
      expect(body.values).toMatchObject({ email, name: "Kim" });
      expect(JSON.stringify(body)).not.toContain("passwordpassword");
    }
    const bad = await signUp(new CookieJar(), { email: "two@@example.com", password: CHOSEN });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { fieldErrors: Record<string, string> }).fieldErrors.email).toMatch(/one e-mail address/);
    const mine = await signUp(new CookieJar(), { email: "samantha.smithers@example.com", password: "Samantha.Smithers" });
    expect(((await mine.json()) as { fieldErrors: Record<string, string> }).fieldErrors.password).toMatch(/e-mail address/);
    expect(smtp.sink.messages).toHaveLength(0);
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("a sign-up refused for its address comes back with the address and name as typed and says why the password must be typed again, in en/fr/de/ar", async () => {
    const res = await signUp(new CookieJar(), { email: "two@@example.com", name: "Kim", password: CHOSEN });
    expect(res.status).toBe(400);
    const page = await res.json();
    for (const locale of ["en", "fr", "de", "ar"] as const) {
      const html = renderPage(signup, "/auth/signup", locale, { loaderData: page, actionData: page });
      expect(html).toMatch(/id="signup-email"[^>]*value="two@@example.com"/);
      expect(html).toMatch(/id="signup-name"[^>]*value="Kim"/);
      expect(html).not.toContain(CHOSEN);
      expect(textOf(html)).toContain(runWithLocale(locale, () => t("signup.passwordAgain")));
    }
    // The first visit has nothing to type again.
    const first = await (await callRoute(signup.loader, get("/auth/signup"))).json();
    expect(textOf(renderPage(signup, "/auth/signup", "en", { loaderData: first }))).not.toContain(t("signup.passwordAgain"));
  });

  it("a POST without a valid CSRF token is a 403 that sends nothing and stores nothing", async () => {
    const jar = new CookieJar();
    const res = await signUp(jar, { email: "new@example.com", password: CHOSEN }, { csrf: null });
    expect(res.status).toBe(403);
    const forged = await signUp(jar, { email: "new@example.com", password: CHOSEN }, { csrf: "a".repeat(64) });
    expect(forged.status).toBe(403);
    expect(smtp.sink.messages).toHaveLength(0);
    expect(await testDb().verificationToken.count()).toBe(0);
    expect(await testDb().limitCounter.count()).toBe(0);
  });

  it("finishing one sign-up ends every other pending sign-up for that address (two tabs)", async () => {
    const first = await signedUp();
    const second = await signedUp();
    expect(await openLink(linkIn(second.message!), second.jar)).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(await openLink(linkIn(first.message!), first.jar)).toHaveErrorRedirect("Verification");
    expect(await testDb().user.count()).toBe(1);
  });

  it("a pending sign-up whose address got an account meanwhile ends on Verification and sets nothing", async () => {
    const { message, jar } = await signedUp("late@example.com");
    await createUser("late@example.com", "Early");
    const res = await openLink(linkIn(message!), jar);
    expect(res).toHaveErrorRedirect("Verification");
    expect(res).not.toHaveSessionCookie();
    expect((await testDb().user.findUniqueOrThrow({ where: { email: "late@example.com" } })).name).toBe("Early");
  });

  it("counts against the e-mail send limits for both kinds of address", async () => {
    await createUser("owner@example.com");
    for (const email of ["owner@example.com", "nobody@example.com"]) {
      for (let i = 0; i < 5; i++) expect((await signUp(new CookieJar(), { email, password: CHOSEN })).status).toBe(302);
      const res = await signUp(new CookieJar(), { email, password: CHOSEN });
      expect(res.status).toBe(429);
      expect(res.headers.get("Retry-After")).toMatch(/^\d+$/);
      // The same words for both (ADR 111): the address's e-mails, never "too many attempts".
      expect(((await res.json()) as { formError: string }).formError).toMatch(/^We have sent several e-mails to this address recently\./);
    }
    expect(location(await signUp(new CookieJar(), { email: "third@example.com", password: CHOSEN })).pathname).toBe("/auth/verify-request");
  });
});
