// /device in Chromium with JavaScript off (the visitor's walk of issue 32, ADR 179): a wrong code is
// answered with a redirect back to /device with the reason, so reload and Back never post the code
// again; a signed-out visitor is sent to sign in first and comes back to /device.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { signInWithPassword } from "../support/signin-form";
import { seedUser } from "../support/seed-user";

const ADA = { email: "ada@example.com", password: "correct horse battery", name: "Ada", verified: true };
let browser: Browser;
let app: RunningApp;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [browser, app] = await Promise.all([connectBrowser(), startApp({ AUTH_PROVIDER: "true" })]);
  await seedUser(app, ADA);
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await app?.stop();
});

describe("/device without JavaScript", () => {
  it("a signed-out visitor signs in first and comes back; a wrong code comes back as a page of its own that reload and Back show without posting", async () => {
    const context = await newContext(browser, { javaScriptEnabled: false });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${app.url}/device`);
    expect(new URL(page.url()).pathname).toBe("/auth/signin");
    await signInWithPassword(page, ADA.email, ADA.password);
    await page.waitForURL(`${app.url}/device`);

    await page.locator("#device-code").fill("BCDF-GHJK");
    await page.locator("#device-code-form [type=submit]").click();
    await page.waitForURL(`${app.url}/device?error=wrong-code`);
    await expect(page.locator("#device-error").textContent()).resolves.toContain("That code is not right");
    // A reload is a GET: the same page, nothing posted again.
    const reloaded = await page.reload();
    expect(reloaded?.request().method()).toBe("GET");
    await expect(page.locator("#device-error").count()).resolves.toBe(1);
    // Back: the code form, a GET too.
    const back = await page.goBack();
    expect(back?.request().method()).toBe("GET");
    expect(new URL(page.url()).pathname).toBe("/device");
    await expect(page.locator("#device-code-form").count()).resolves.toBe(1);
  });
});
