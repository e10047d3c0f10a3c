// Passwords for visitors in a real Chromium against the production server and a real SMTP server,
// with JavaScript off and on: sign-up → the e-mailed code → /welcome; a
// forgotten password → the e-mailed link → a new password → /account, with the old session ended.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { isSecurityNotice, linkIn, startSmtpSink, waitForMessages, type ReceivedMessage, type SmtpSink } from "../support/smtp-sink";
import { enterAddress, signInWithPassword } from "../support/signin-form";

let browser: Browser;
let sink: SmtpSink;
let app: RunningApp;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [browser, sink] = await Promise.all([connectBrowser(), startSmtpSink()]);
  app = await startApp({ AUTH_EMAIL_SERVER: sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>", AUTH_SIGNUP: "true" });
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

function codeIn(message: ReceivedMessage): string {
  return /code in the browser where you asked: (\d{6})/.exec(message.text ?? "")![1]!;
}

/** The field is refused: invalid, described by its message (data-error-for), which says `text`. */
async function expectFieldRefused(page: Page, selector: string, field: string, text: RegExp) {
  const input = page.locator(selector);
  expect(await input.getAttribute("aria-invalid")).toBe("true");
  const describedBy = await input.getAttribute("aria-describedby");
  const message = page.locator(`#${describedBy}`);
  expect(await message.getAttribute("data-error-for")).toBe(field);
  expect(await message.getAttribute("role")).toBe("alert");
  expect(await message.textContent()).toMatch(text);
}

for (const javaScriptEnabled of [false, true]) {
  describe(`passwords in Chromium, JavaScript ${javaScriptEnabled ? "on" : "off"}`, () => {
    it("sign-up → the e-mailed code → /welcome", async () => {
      const email = `nova-${javaScriptEnabled ? "on" : "off"}@example.com`;
      const page = await newPage(javaScriptEnabled);
      await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
      await page.locator("#signup-link").click();
      await page.waitForURL(/\/auth\/signup/);
      expect(await page.title()).toBe("Create an account · Vestibule");
      expect(await page.locator("#signup-password").getAttribute("autocomplete")).toBe("new-password");

      // A common password: the page comes back with 400, the address and name kept, the password not.
      await page.locator("#signup-email").fill(email);
      await page.locator("#signup-name").fill("Nova");
      await page.locator("#signup-password").fill("passwordpassword");
      const refused = page.waitForResponse((r) => r.url().endsWith("/auth/signup") && r.request().method() === "POST");
      await page.getByRole("button", { name: "Create account" }).click();
      expect((await refused).status()).toBe(400);
      await page.locator("#signup-password-error").waitFor();
      await expectFieldRefused(page, "#signup-password", "password", /too common/);
      expect(await page.locator("#signup-email").inputValue()).toBe(email);
      expect(await page.locator("#signup-name").inputValue()).toBe("Nova");
      expect(await page.locator("#signup-password").inputValue()).toBe("");

      const before = sink.messages.length;
      await page.locator("#signup-password").fill("velvet lantern orbit");
      await page.getByRole("button", { name: "Create account" }).click();
      await page.waitForURL(/\/auth\/verify-request\?provider=email&type=signup$/);
      const message = (await sink.waitFor(before + 1)).at(-1)!;
      expect(message.envelope.to).toEqual([email]);

      // The code form is there in this browser; a wrong code first, then the right one.
      const code = codeIn(message);
      const input = page.locator("#email-code-input");
      expect(await input.getAttribute("autocomplete")).toBe("one-time-code");
      await input.fill(code === "000000" ? "000001" : "000000");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.locator("#email-code-input-error").waitFor();
      await expectFieldRefused(page, "#email-code-input", "code", /4 tries are left/);
      await page.locator("#email-code-input").fill(code);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/welcome\?callbackUrl=%2Faccount$/);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Welcome, Nova!");
    });

    it("forgotten password → the e-mailed link → a new password → /account; the old session is ended", async () => {
      const email = `ada-${javaScriptEnabled ? "on" : "off"}@example.com`;
      await seedUser(app, { email, password: "correct horse battery", name: "Ada" });

      // The old session: signed in with the old password in another browser.
      const old = await newPage(false);
      await old.goto(`${app.url}/auth/signin`);
      await signInWithPassword(old, email, "correct horse battery");
      await old.waitForURL(`${app.url}/`);

      const page = await newPage(javaScriptEnabled);
      await page.goto(`${app.url}/auth/signin`);
      // The link sits beside the password, on the sign-in form's second step.
      await enterAddress(page, email);
      await page.locator("#forgot-password-link").click();
      await page.waitForURL(/\/auth\/forgot-password$/);
      // The address just typed is carried (in the POST, not the URL): nothing to type again.
      expect(await page.locator("#forgot-email").inputValue()).toBe(email);
      // Not counting the security e-mail of the sign-in above from a new browser (ADR 081).
      const before = sink.messages.filter((m) => !isSecurityNotice(m)).length;
      await page.locator("#forgot-email").fill(email);
      await page.getByRole("button", { name: "Send me a link" }).click();
      await page.waitForURL(/\/auth\/verify-request\?provider=email&type=reset$/);
      const link = linkIn((await waitForMessages(sink, before + 1))[before]!);
      expect(link.pathname).toBe("/auth/reset-password");

      await page.goto(link.href);
      expect(await page.title()).toBe("Choose a new password · Vestibule");
      await page.locator("#reset-password").fill("short");
      // The browser's own minlength check would stop a too-short value; the server's policy is what is tested here.
      await page.locator("#reset-password").evaluate((el) => el.removeAttribute("minlength"));
      await page.getByRole("button", { name: "Set new password" }).click();
      await page.locator("#reset-password-error").waitFor();
      await expectFieldRefused(page, "#reset-password", "password", /at least 15 characters/);
      await page.locator("#reset-password").fill("a brand new passphrase");
      await page.getByRole("button", { name: "Set new password" }).click();
      await page.waitForURL(`${app.url}/account?updated=password-reset`);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Your account");
      // Every other change ends on a notice; a reset does too.
      await expect(page.locator("main").textContent()).resolves.toContain("Your password was changed.");

      // The old browser's session is over: /account sends it to the sign-in page.
      await old.goto(`${app.url}/account`);
      expect(new URL(old.url()).pathname).toBe("/auth/signin");
    });
  });
}
