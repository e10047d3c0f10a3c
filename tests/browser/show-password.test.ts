// The show-password control (docs/decisions/084) in a real Chromium against
// the production server: with JavaScript it is a toggle button (aria-pressed, a label in the
// page's language) that shows and hides the password; without JavaScript it is not there at all.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { connectBrowser, gotoHydrated, newContext, startApp, type RunningApp } from "../support/browser";
import { enterAddress } from "../support/signin-form";

let browser: Browser;
let app: RunningApp;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [browser, app] = await Promise.all([connectBrowser(), startApp()]);
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
  await app?.stop();
});

async function newPage(javaScriptEnabled: boolean, locale = "en-GB"): Promise<Page> {
  const context = await newContext(browser, { javaScriptEnabled, locale });
  contexts.push(context);
  return context.newPage();
}

const PASSWORD = "#input-password-for-credentials-provider";

describe("the show-password control", () => {
  it("with JavaScript, a visitor presses Show password to read what they typed, and again to hide it", async () => {
    const page = await newPage(true);
    await gotoHydrated(page, `${app.url}/auth/signin`);
    // The password is on the sign-in form's second step (ADR 087).
    await enterAddress(page, "ada@example.com");
    await page.locator(PASSWORD).fill("correct horse battery staple");
    const toggle = page.getByRole("button", { name: "Show password" });
    expect(await toggle.getAttribute("aria-pressed")).toBe("false");
    expect(await toggle.getAttribute("aria-controls")).toBe(PASSWORD.slice(1));
    expect(await page.locator(PASSWORD).getAttribute("type")).toBe("password");
    await toggle.click();
    expect(await toggle.getAttribute("aria-pressed")).toBe("true");
    expect(await page.locator(PASSWORD).getAttribute("type")).toBe("text");
    expect(await page.locator(PASSWORD).inputValue()).toBe("correct horse battery staple");
    await toggle.click();
    expect(await toggle.getAttribute("aria-pressed")).toBe("false");
    expect(await page.locator(PASSWORD).getAttribute("type")).toBe("password");
  });

  it("a visitor who submits with the password shown gets it hidden again: nobody behind them reads it on the answer, and the browser keeps no plain-text copy", async () => {
    const page = await newPage(true);
    await gotoHydrated(page, `${app.url}/auth/signin`);
    await enterAddress(page, "nobody@example.com");
    await page.locator(PASSWORD).fill("correct horse battery staple");
    await page.getByRole("button", { name: "Show password" }).click();
    expect(await page.locator(PASSWORD).getAttribute("type")).toBe("text");
    const typeAtSubmit = page.evaluate(
      (selector) =>
        new Promise<string>((resolve) =>
          document.querySelector(selector)!.closest("form")!.addEventListener("submit", () => queueMicrotask(() => resolve(document.querySelector(selector)!.getAttribute("type")!)), { once: true }),
        ),
      PASSWORD,
    );
    await page.locator(PASSWORD).press("Enter");
    expect(await typeAtSubmit).toBe("password");
    await page.locator("#credentials-error").waitFor();
    expect(await page.locator(PASSWORD).getAttribute("type")).toBe("password");
    expect(await page.getByRole("button", { name: "Show password" }).getAttribute("aria-pressed")).toBe("false");
  });

  it("its label comes from the page's language", async () => {
    const page = await newPage(true, "de-DE");
    await gotoHydrated(page, `${app.url}/auth/signin`);
    await enterAddress(page, "ada@example.com");
    await page.getByRole("button", { name: "Passwort anzeigen" }).waitFor();
  });

  it("without JavaScript the control is absent, not broken: the field stays a password field", async () => {
    const page = await newPage(false);
    await page.goto(`${app.url}/auth/signin`);
    await enterAddress(page, "ada@example.com");
    await page.locator(PASSWORD).waitFor();
    expect(await page.locator(PASSWORD).getAttribute("type")).toBe("password");
    expect(await page.locator("button.show-password").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Show password" }).count()).toBe(0);
  });
});
