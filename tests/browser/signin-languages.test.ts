// The identifier-first sign-in form (ADR 087) in German and in Arabic, with
// JavaScript off (two pages) and on (one page that swaps in place, moves the focus and says so),
// signing in with the password and with the e-mail code. German comes from Accept-Language (the
// browser's locale), Arabic from the language menu's cookie. One app, one browser, a fresh
// context per sign-in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { connectBrowser, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { enterAddress, SIGNIN, submitPassword } from "../support/signin-form";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";

let browser: Browser;
let sink: SmtpSink;
let app: RunningApp;
const PASSWORD = "correct horse battery";

const LANGUAGES = {
  de: { dir: "ltr", chooseMethod: (a: string) => `Anmeldung als ${a}. Wählen Sie, wie Sie fortfahren möchten.`, change: "Ändern" },
  // In a right-to-left page the address is isolated (U+2068 … U+2069), so its full stop stays after it.
  ar: { dir: "rtl", chooseMethod: (a: string) => `تسجيل الدخول باسم \u2068${a}\u2069. اختر طريقة المتابعة.`, change: "تغيير" },
} as const;
type Lang = keyof typeof LANGUAGES;

beforeAll(async () => {
  [browser, sink] = await Promise.all([connectBrowser(), startSmtpSink()]);
  app = await startApp({ AUTH_EMAIL_SERVER: sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>" });
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await sink?.close();
});

async function openSignIn(lang: Lang, javaScriptEnabled: boolean): Promise<Page> {
  const context =
    lang === "de"
      ? await newContext(browser, { javaScriptEnabled, locale: "de-DE" })
      : await newContext(browser, { javaScriptEnabled, locale: "en-US" });
  if (lang === "ar") await context.addCookies([{ name: "lang", value: "ar", url: app.url }]);
  const page = await context.newPage();
  await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
  if (javaScriptEnabled) await waitForHydration(page);
  await expectLanguage(page, lang);
  return page;
}

async function expectLanguage(page: Page, lang: Lang) {
  expect(await page.locator("html").getAttribute("lang")).toBe(lang);
  expect(await page.locator("html").getAttribute("dir")).toBe(LANGUAGES[lang].dir);
}

/** Step one to step two: a new page without JavaScript; with it, the same page, focus and announcement moved. */
async function continueWith(page: Page, lang: Lang, javaScriptEnabled: boolean, email: string) {
  const before = page.url();
  await enterAddress(page, email);
  expect(await page.locator(SIGNIN.shownAddress).inputValue()).toBe(email);
  await expect(page.locator(SIGNIN.change).textContent()).resolves.toBe(LANGUAGES[lang].change);
  await expectLanguage(page, lang);
  if (javaScriptEnabled) {
    // In place: no navigation, the address never in the URL, the focus on the password.
    expect(page.url()).toBe(before);
    await page.waitForFunction((id) => document.activeElement?.id === id, SIGNIN.password.slice(1));
    await expect(page.locator("#signin-step-status").textContent()).resolves.toBe(LANGUAGES[lang].chooseMethod(email));
  } else {
    expect(new URL(page.url()).searchParams.get("step")).toBe("methods");
  }
  expect(page.url()).not.toContain(email.split("@")[0]!);
}

describe("identifier-first sign-in in German and Arabic", () => {
  for (const lang of ["de", "ar"] as const) {
    for (const javaScriptEnabled of [false, true]) {
      const js = javaScriptEnabled ? "on" : "off";

      it(`${lang}, JavaScript ${js}: the address once, then the password, lands on /account in ${lang}`, async () => {
        const email = `password-${lang}-${js}@example.com`;
        await seedUser(app, { email, password: PASSWORD, name: "Ada" });
        const page = await openSignIn(lang, javaScriptEnabled);
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));
        await continueWith(page, lang, javaScriptEnabled, email);
        await submitPassword(page, PASSWORD);
        await page.waitForURL(`${app.url}/account`);
        await expectLanguage(page, lang);
        await expect(page.locator("#profile-email").textContent()).resolves.toContain(email);
        expect(errors).toEqual([]);
        await page.context().close();
      });

      it(`${lang}, JavaScript ${js}: the address once, then the e-mail code, signs in in ${lang}`, async () => {
        const email = `code-${lang}-${js}@example.com`;
        const page = await openSignIn(lang, javaScriptEnabled);
        await continueWith(page, lang, javaScriptEnabled, email);
        const before = sink.messages.length;
        await page.locator(`${SIGNIN.emailForm} button[type="submit"]`).click();
        await page.waitForURL(/\/auth\/verify-request/);
        await expectLanguage(page, lang);
        const message = (await sink.waitFor(before + 1)).at(-1)!;
        expect(message.envelope.to).toEqual([email]);
        const code = /:\s*(\d{6})\s*$/m.exec(message.text ?? "")?.[1];
        expect(code, "the e-mail carries a code").toMatch(/^\d{6}$/);
        if (javaScriptEnabled) await waitForHydration(page);
        await page.locator("#email-code-input").fill(code!);
        await page.locator('#email-code-form button[type="submit"]').click();
        // A new address: its first sign-in goes through /welcome on the way to /account.
        await page.waitForURL((url) => url.pathname === "/welcome" || url.pathname === "/account");
        await expectLanguage(page, lang);
        const session = await (await page.context().request.get(`${app.url}/auth/session`)).json();
        expect(session.user.email).toBe(email);
        await page.context().close();
      });
    }
  }

  for (const javaScriptEnabled of [false, true]) {
    it(`a visitor who mistypes the password and reloads the refusal still finds the address on step two (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
      const email = `typo-${javaScriptEnabled ? "on" : "off"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Ada" });
      const page = await openSignIn("de", javaScriptEnabled);
      await continueWith(page, "de", javaScriptEnabled, email);
      await submitPassword(page, "not the password");
      await page.waitForURL(/error=CredentialsSignin/);
      for (let visit = 0; visit < 2; visit++) {
        if (javaScriptEnabled) await waitForHydration(page);
        // Step two, not step one: counted first, so a page without it fails at once.
        expect(await page.locator(SIGNIN.shownAddress).count()).toBe(1);
        expect(await page.locator(SIGNIN.shownAddress).inputValue()).toBe(email);
        await expectLanguage(page, "de");
        await page.reload();
      }
      await submitPassword(page, PASSWORD);
      await page.waitForURL(`${app.url}/account`);
      await page.context().close();
    });
  }

  it("with JavaScript, 'change' goes back to step one in place, the address kept and focused", async () => {
    const page = await openSignIn("ar", true);
    await continueWith(page, "ar", true, "change-me@example.com");
    await page.locator(SIGNIN.change).click();
    await page.waitForFunction((id) => document.activeElement?.id === id, SIGNIN.addressInput.slice(1));
    expect(await page.locator(SIGNIN.addressInput).inputValue()).toBe("change-me@example.com");
    await expect(page.locator("#signin-step-status").textContent()).resolves.toBe("أدخل عنوان بريدك الإلكتروني.");
    await page.context().close();
  });
});
