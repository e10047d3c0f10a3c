// What a visitor met on a walk through the flows (issue 32, the last list), done again in a real
// Chromium against the production server, on a 320 px phone, in Arabic where words are involved:
// a change on /account lands at its section with its answer in view (JavaScript off and on), the
// address typed on the sign-in page survives a change of language, and a user with no password
// proves herself again with an e-mailed code without JavaScript.
import { mkdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page } from "playwright-core";
import { connectBrowser, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { isSecurityNotice, linkIn, startSmtpSink, waitForMessages, type SmtpSink } from "../support/smtp-sink";
import { requestEmailSignIn, SIGNIN, signInWithPassword } from "../support/signin-form";

const PHONE = { viewport: { width: 320, height: 640 } } as const;
const ADA = { email: "ada@example.com", password: "correct horse battery staple", name: "Ada" };
/** Screenshots for a person to look at, when VESTIBULE_SHOTS names a folder. */
const SHOTS = process.env.VESTIBULE_SHOTS;

let browser: Browser;
let app: RunningApp;
let sink: SmtpSink;
const contexts: BrowserContext[] = [];

async function context(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const made = await newContext(browser, { ...PHONE, ...options });
  contexts.push(made);
  return made;
}

async function shot(page: Page, name: string) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: false });
}

/** Whether the top of `locator` is inside the window (what the visitor sees without scrolling). */
async function inView(locator: Locator): Promise<boolean> {
  return locator.evaluate((el) => {
    const box = el.getBoundingClientRect();
    return box.top > -1 && box.top < window.innerHeight;
  });
}

/** Arabic, as the language menu leaves it. */
async function arabic(c: BrowserContext) {
  await c.addCookies([{ name: "lang", value: "ar", url: app.url }]);
}

beforeAll(async () => {
  [browser, sink] = await Promise.all([connectBrowser(), startSmtpSink()]);
  app = await startApp({ AUTH_EMAIL_SERVER: sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>" });
  await seedUser(app, ADA);
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
  await app?.stop();
  await sink?.close();
});

describe("issue 32 in Chromium, 320 px", () => {
  for (const javaScriptEnabled of [false, true]) {
    it(`'Set up an authenticator app' opens the page at the setup with its key in view, and a saved name at its notice, in Arabic (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
      const device = await context({ javaScriptEnabled });
      await arabic(device);
      const page = await device.newPage();
      await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
      if (javaScriptEnabled) await waitForHydration(page);
      await signInWithPassword(page, ADA.email, ADA.password);
      await page.waitForURL(`${app.url}/account`);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.locator("#totp-start-form [type=submit]").click();
      await page.locator("[data-totp-secret]").waitFor();
      // The set-up is focused, so the page opens at it, the QR code and the key in view.
      await page.waitForFunction(() => document.activeElement?.id === "totp-setup");
      await page.waitForFunction(() => {
        const box = document.querySelector("#totp-setup")!.getBoundingClientRect();
        return box.top > -1 && box.top < window.innerHeight;
      });
      expect(await inView(page.locator("[data-totp-secret]"))).toBe(true);
      await shot(page, `totp-start-${javaScriptEnabled ? "js" : "nojs"}`);

      // A change reported by a redirect lands at its notice, just above its section, in view.
      await page.locator("#profile-name-input").fill("Ada L.");
      await page.locator("#profile-form [type=submit]").click();
      await page.waitForURL(/\/account\?updated=profile#profile-notice$/);
      await page.locator("#profile-notice").waitFor();
      await page.waitForFunction(() => {
        const box = document.querySelector("#profile-notice")!.getBoundingClientRect();
        // Scrolled to, the top sits at 0 give or take a fraction of a pixel.
        return box.top > -1 && box.top < window.innerHeight;
      });
      await shot(page, `profile-notice-${javaScriptEnabled ? "js" : "nojs"}`);
    });
  }

  it("the address typed on the sign-in page is still there after switching the language (JavaScript on)", async () => {
    const page = await (await context()).newPage();
    await page.goto(`${app.url}/auth/signin`);
    await waitForHydration(page);
    await page.locator(SIGNIN.addressInput).fill("typed@example.com");
    await page.locator("#language-select").selectOption("ar");
    await page.locator("#language-menu [type=submit]").click();
    await page.waitForFunction(() => document.documentElement.lang === "ar");
    await waitForHydration(page);
    await expect(page.locator(SIGNIN.addressInput).inputValue()).resolves.toBe("typed@example.com");
    await shot(page, "language-kept-address");
  });

  it("a user who signs in by e-mail only proves herself again with an e-mailed code, JavaScript off, in Arabic, and goes back where she was", async () => {
    const device = await context({ javaScriptEnabled: false });
    await arabic(device);
    const page = await device.newPage();
    await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
    const before = sink.messages.filter((m) => !isSecurityNotice(m)).length;
    await requestEmailSignIn(page, "pen@example.com");
    await shot(page, "verify-request");
    const link = linkIn((await waitForMessages(sink, before + 1))[before]!);
    await page.goto(link.href);
    await page.goto(`${app.url}/auth/reauth?callbackUrl=%2Faccount%23passkeys`);
    await shot(page, "reauth-choose");
    const asked = sink.messages.filter((m) => !isSecurityNotice(m)).length;
    await page.locator("#reauth-email-form [type=submit]").click();
    const message = (await waitForMessages(sink, asked + 1))[asked]!;
    const code = /(\d{6})/.exec(message.text ?? "")![1]!;
    await page.locator("#reauth-code-form input[name=code]").fill(code);
    await shot(page, "reauth-code");
    await page.locator("#reauth-code-form [type=submit]").click();
    await page.waitForURL(`${app.url}/account#passkeys`);
    // Recently signed in: the standing "sign in again" hint is gone.
    await expect(page.locator("#reauth-hint").count()).resolves.toBe(0);
    await shot(page, "reauth-done");
  });
});
