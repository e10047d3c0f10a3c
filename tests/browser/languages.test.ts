// Languages in a real Chromium against the production server: the menu
// works without JavaScript and keeps the page, Arabic pages are right to left, and with
// JavaScript dates switch to the browser's time zone after hydration without a hydration error.
// With SCREENSHOT_DIR set, it also saves the Arabic sign-in and account pages at 320 and 1280 px.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { signInWithPassword } from "../support/signin-form";

let browser: Browser;
let app: RunningApp;
const EMAIL = "ada@example.com";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startApp();
  await seedUser(app, { email: EMAIL, password: PASSWORD, name: "Ada" });
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function signIn(page: Page) {
  await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
  await signInWithPassword(page, EMAIL, PASSWORD);
  await page.waitForURL(/\/account$/);
}

describe("languages in the browser", () => {
  it("without JavaScript, the menu switches the language and keeps the page", async () => {
    const context = await newContext(browser, { javaScriptEnabled: false, locale: "en-US" });
    const page = await context.newPage();
    await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    await page.getByLabel("Language").selectOption("ar");
    await page.locator("#language-menu button").click();
    await page.waitForURL(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
    expect(await page.locator("html").getAttribute("lang")).toBe("ar");
    expect(await page.locator("html").getAttribute("dir")).toBe("rtl");
    await expect(page.locator("h1").textContent()).resolves.toBe("تسجيل الدخول");
    // Mirrored: the site name sits at the right edge, the menu at the left.
    const brand = await page.locator(".brand").boundingBox();
    const menu = await page.locator("#language-menu").boundingBox();
    expect(brand!.x).toBeGreaterThan(menu!.x);
    // Without JavaScript, dates are in UTC with the zone named, in Arabic words (ADR 161).
    await signIn(page);
    await expect(page.locator("#profile-heading + dl time").textContent()).resolves.toMatch(/التوقيت العالمي المنسق$/);
    await context.close();
  });

  it("with JavaScript, dates are in the browser's time zone after hydration, with no hydration error", async () => {
    const context = await newContext(browser, { timezoneId: "Asia/Tokyo", locale: "de-DE" });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error" && /hydrat|did not match/i.test(m.text())) problems.push(m.text());
    });
    await signIn(page);
    expect(await page.locator("html").getAttribute("lang")).toBe("de");
    await expect(page.locator("h1").textContent()).resolves.toBe("Ihr Konto");
    const memberSince = page.locator("#profile-heading + dl time");
    await page.waitForFunction(() => /GMT\+9|JST/.test(document.querySelector("#profile-heading + dl time")?.textContent ?? ""));
    expect(await memberSince.textContent()).not.toMatch(/UTC/);
    await expect(page.locator("#activity").textContent()).resolves.toContain("Mit einem Passwort angemeldet");
    expect(problems).toEqual([]);
    await context.close();
  });

  it.runIf(process.env.SCREENSHOT_DIR)("screenshots of the Arabic pages at 320 and 1280 px", async () => {
    for (const width of [320, 1280]) {
      const context = await newContext(browser, { viewport: { width, height: 900 }, locale: "ar", extraHTTPHeaders: { "Accept-Language": "ar" } });
      const page = await context.newPage();
      await page.goto(`${app.url}/auth/signin`);
      await page.screenshot({ path: path.join(process.env.SCREENSHOT_DIR!, `signin-ar-${width}.png`), fullPage: true });
      await signIn(page);
      await page.screenshot({ path: path.join(process.env.SCREENSHOT_DIR!, `account-ar-${width}.png`), fullPage: true });
      await context.close();
    }
  });
});
