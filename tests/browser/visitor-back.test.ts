// What a visitor met on a walk (issue "every page tells the visitor the truth"), done again in a
// real Chromium, JavaScript off and on:
// - a wrong code, then the right one, then Back: the page before is a page, never Chromium's
//   "Confirm form resubmission" (ERR_CACHE_MISS), on /auth/two-factor, for an e-mailed code, for a
//   reset by code (a wrong code, then a refused new password), on /auth/reauth, and on /account
//   (the authenticator set-up's first code, the current password of a password change);
// - a notice of one change ("Your name was changed") does not stay on /account after another form.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { totpCodeAt, totpStep } from "../../app/auth/two-factor/totp.server";
import { connectBrowser, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { startSmtpSink, type ReceivedMessage, type SmtpSink } from "../support/smtp-sink";
import { requestEmailSignIn, signInWithPassword } from "../support/signin-form";

const PASSWORD = "correct horse battery staple";

let browser: Browser;
let app: RunningApp;
let sink: SmtpSink;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [browser, sink] = await Promise.all([connectBrowser(), startSmtpSink()]);
  app = await startApp({ AUTH_EMAIL_SERVER: sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>" });
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
  await app?.stop();
  await sink?.close();
});

async function newPage(javaScriptEnabled: boolean): Promise<Page> {
  const context = await newContext(browser, { javaScriptEnabled });
  contexts.push(context);
  return context.newPage();
}

const CODE = /code in the browser where you asked: (\d{6})/;
function codeIn(message: ReceivedMessage): string {
  return CODE.exec(message.text ?? "")![1]!;
}

/** Another six digits than `code`. */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** Back one page: where it lands, or the error Chromium gave instead of a page. */
async function back(page: Page): Promise<{ error: string | null; url: string }> {
  const error = await page.goBack().then(
    () => null,
    (e: unknown) => String(e),
  );
  return { error, url: page.url() };
}

async function signIn(page: Page, email: string, javaScriptEnabled: boolean, callbackUrl = "/account") {
  await page.goto(`${app.url}/auth/signin?${new URLSearchParams({ callbackUrl })}`);
  if (javaScriptEnabled) await waitForHydration(page);
  await signInWithPassword(page, email, PASSWORD);
}

for (const javaScriptEnabled of [false, true]) {
  describe(`Back after a code, JavaScript ${javaScriptEnabled ? "on" : "off"}`, () => {
    it("a wrong authenticator code, the right one, then Back: a page, not 'Confirm form resubmission'", async () => {
      const email = `back-totp-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Tess" });
      const setup = await newPage(false);
      await signIn(setup, email, false);
      await setup.waitForURL(`${app.url}/account`);
      await setup.locator("#totp-start-form [type=submit]").click();
      const secret = (await setup.locator("[data-totp-secret]").getAttribute("data-totp-secret"))!;
      await setup.locator("#totp-confirm-code").fill(totpCodeAt(secret, totpStep(new Date())));
      await setup.locator("#totp-confirm-code-form [type=submit]").click();
      await setup.locator("[data-recovery-code]").first().waitFor();

      const page = await newPage(javaScriptEnabled);
      await signIn(page, email, javaScriptEnabled);
      await page.waitForURL(`${app.url}/auth/two-factor`);
      if (javaScriptEnabled) await waitForHydration(page);
      const next = totpCodeAt(secret, totpStep(new Date()) + 1);
      await page.locator("#two-factor-code").fill(wrong(next));
      await page.locator("#two-factor-form [type=submit]").click();
      await page.locator("#two-factor-code-error").waitFor();
      await expect(page.locator("#two-factor-code-error").textContent()).resolves.toContain("4 tries left");
      // The refusal is a page of its own (a GET): reloading it posts nothing again.
      const reloaded = await page.reload();
      expect(reloaded?.request().method()).toBe("GET");
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#two-factor-code").fill(next);
      await page.locator("#two-factor-form [type=submit]").click();
      await page.waitForURL(`${app.url}/account`);

      const { error, url } = await back(page);
      expect(error).toBeNull();
      expect(url.startsWith(app.url)).toBe(true);
      await page.locator("h1").first().waitFor();
    });

    it("a wrong e-mailed code, the right one, then Back: a page, not 'Confirm form resubmission'", async () => {
      const email = `back-code-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Ada" });
      const page = await newPage(javaScriptEnabled);
      await page.goto(`${app.url}/auth/signin`);
      if (javaScriptEnabled) await waitForHydration(page);
      await requestEmailSignIn(page, email);
      const mailed = () => sink.messages.find((m) => m.to.includes(email) && CODE.test(m.text ?? ""));
      await expect.poll(mailed, { timeout: 10_000 }).toBeTruthy();
      const code = codeIn(mailed()!);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#email-code-input").fill(wrong(code));
      await page.locator('#email-code-form button[type="submit"]').click();
      await page.locator("#email-code-input-error").waitFor();
      await expect(page.locator("#email-code-input-error").textContent()).resolves.toMatch(/\b4 tries\b/);
      const reloaded = await page.reload();
      expect(reloaded?.request().method()).toBe("GET");
      await page.locator("#email-code-input").waitFor();
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#email-code-input").fill(code);
      await page.locator('#email-code-form button[type="submit"]').click();
      await page.waitForURL(`${app.url}/`);

      const { error, url } = await back(page);
      expect(error).toBeNull();
      expect(url.startsWith(app.url)).toBe(true);
      await page.locator("h1").first().waitFor();
    });

    it("a reset by code: a wrong code, then a refused new password, then the right ones, then Back: a page, not 'Confirm form resubmission'", async () => {
      const email = `back-reset-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Grace" });
      const page = await newPage(javaScriptEnabled);
      await page.goto(`${app.url}/auth/forgot-password`);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#forgot-email").fill(email);
      await page.locator("#forgot-password-form [type=submit]").click();
      await page.waitForURL((url) => url.pathname === "/auth/verify-request");
      const mailed = () => sink.messages.find((m) => m.to.includes(email) && CODE.test(m.text ?? ""));
      await expect.poll(mailed, { timeout: 10_000 }).toBeTruthy();
      const code = codeIn(mailed()!);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#email-code-input").fill(wrong(code));
      await page.locator("#email-code-password").fill("a long and quiet harbour at dawn");
      await page.locator("#email-code-form [type=submit]").click();
      await page.locator("#email-code-input-error").waitFor();
      await expect(page.locator("#email-code-input-error").textContent()).resolves.toMatch(/\b4 tries\b/);
      // The new password typed beside the wrong code is not kept, and the page says so; the ways on stay.
      await expect(page.locator("#email-code-password").inputValue()).resolves.toBe("");
      await expect(page.locator("#email-code-password-cleared").textContent()).resolves.toMatch(/not kept/);
      await expect(page.locator("#verify-resend-form").count()).resolves.toBe(1);
      await expect(page.locator('a[href="/"]').count()).resolves.toBeGreaterThan(0);
      // Nothing typed is in the address of the page that says why.
      expect(page.url()).not.toContain(wrong(code));
      const reloaded = await page.reload();
      expect(reloaded?.request().method()).toBe("GET");
      if (javaScriptEnabled) await waitForHydration(page);
      // The right code with a password the policy refuses: the reason survives the redirect.
      await page.locator("#email-code-input").fill(code);
      await page.locator("#email-code-password").fill("passwordpassword");
      await page.locator("#email-code-form [type=submit]").click();
      await page.locator("#email-code-password-error").waitFor();
      await expect(page.locator("#email-code-password-error").textContent()).resolves.toMatch(/too common/);
      expect(page.url()).not.toContain("passwordpassword");
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#email-code-input").fill(code);
      await page.locator("#email-code-password").fill("a long and quiet harbour at dawn");
      await page.locator("#email-code-form [type=submit]").click();
      await page.waitForURL((url) => url.pathname === "/account");

      const { error, url } = await back(page);
      expect(error).toBeNull();
      expect(url.startsWith(app.url)).toBe(true);
      await page.locator("h1").first().waitFor();
    });

    it("re-authentication: a wrong password, the right one, then Back: a page, not 'Confirm form resubmission'", async () => {
      const email = `back-reauth-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Hedy" });
      const page = await newPage(javaScriptEnabled);
      await signIn(page, email, javaScriptEnabled);
      await page.waitForURL(`${app.url}/account`);
      await page.goto(`${app.url}/auth/reauth?callbackUrl=%2Faccount`);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#reauth-password").fill("not the password");
      await page.locator("#reauth-password-form [type=submit]").click();
      await page.locator("#reauth-error").waitFor();
      await expect(page.locator("#reauth-error").textContent()).resolves.toMatch(/not right/);
      expect(page.url()).not.toContain("not%20the%20password");
      const reloaded = await page.reload();
      expect(reloaded?.request().method()).toBe("GET");
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#reauth-password").fill(PASSWORD);
      await page.locator("#reauth-password-form [type=submit]").click();
      await page.waitForURL(`${app.url}/account`);

      const { error, url } = await back(page);
      expect(error).toBeNull();
      expect(url.startsWith(app.url)).toBe(true);
      await page.locator("h1").first().waitFor();
    });

    it("/account: a wrong first authenticator code, the right one, then Back: a page, not 'Confirm form resubmission'", async () => {
      const email = `back-setup-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Lise" });
      const page = await newPage(javaScriptEnabled);
      await signIn(page, email, javaScriptEnabled);
      await page.waitForURL(`${app.url}/account`);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#totp-start-form [type=submit]").click();
      const secret = (await page.locator("[data-totp-secret]").getAttribute("data-totp-secret"))!;
      const code = totpCodeAt(secret, totpStep(new Date()));
      await page.locator("#totp-confirm-code").fill(wrong(code));
      await page.locator("#totp-confirm-code-form [type=submit]").click();
      // Back on the page, the refusal in the section, the same set-up shown again for the next try.
      await page.waitForURL((url) => url.searchParams.get("refused") === "setupCodeWrong" && url.hash === "#two-factor-notice");
      await expect(page.locator("#two-factor-notice").textContent()).resolves.toMatch(/did not match/);
      await expect(page.locator("[data-totp-secret]").getAttribute("data-totp-secret")).resolves.toBe(secret);
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("two-factor-notice");
      expect(page.url()).not.toContain(wrong(code));
      const reloaded = await page.reload();
      expect(reloaded?.request().method()).toBe("GET");
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#totp-confirm-code").fill(code);
      await page.locator("#totp-confirm-code-form [type=submit]").click();
      await page.locator("[data-recovery-code]").first().waitFor();

      const { error, url } = await back(page);
      expect(error).toBeNull();
      expect(url.startsWith(app.url)).toBe(true);
      await page.locator("h1").first().waitFor();
    });

    it("/account: a wrong current password, the right one, then Back: a page, not 'Confirm form resubmission'", async () => {
      const email = `back-password-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Emmy" });
      const page = await newPage(javaScriptEnabled);
      await signIn(page, email, javaScriptEnabled);
      await page.waitForURL(`${app.url}/account`);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#password-change-current").fill("not the password");
      await page.locator("#password-change-new").fill("a long and quiet harbour at dawn");
      await page.locator("#password-change-form [type=submit]").click();
      await page.waitForURL((url) => url.searchParams.get("refused") === "currentWrong" && url.hash === "#password-notice");
      await expect(page.locator("#password-notice").textContent()).resolves.toMatch(/not your current password/);
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("password-notice");
      expect(page.url()).not.toContain("harbour");
      expect(page.url()).not.toContain("not%20the");
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#password-change-current").fill(PASSWORD);
      await page.locator("#password-change-new").fill("a long and quiet harbour at dawn");
      await page.locator("#password-change-form [type=submit]").click();
      await page.waitForURL((url) => url.searchParams.get("updated") === "password-changed");

      const { error, url } = await back(page);
      expect(error).toBeNull();
      expect(url.startsWith(app.url)).toBe(true);
      await page.locator("h1").first().waitFor();
    });

    it("the notice of a saved name goes once another form on /account is sent", async () => {
      const email = `back-notice-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Ada" });
      const page = await newPage(javaScriptEnabled);
      await signIn(page, email, javaScriptEnabled);
      await page.waitForURL(`${app.url}/account`);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#profile-name-input").fill("Ada Lovelace");
      await page.locator("#profile-form [type=submit]").click();
      await page.waitForURL((url) => url.searchParams.get("updated") === "profile");
      await page.locator("#profile-notice").waitFor();
      // Another form: its answer is about it alone.
      await page.locator("#totp-start-form [type=submit]").click();
      await page.locator("[data-totp-secret]").waitFor();
      await page.waitForURL((url) => !url.searchParams.has("updated"));
      await expect.poll(() => page.locator("#profile-notice").count()).toBe(0);
    });
  });
}
