// The re-authentication page /auth/reauth (ADR 080) in a real Chromium against the
// production server: with JavaScript on, the signed-in user confirms with their own passkey
// (Chromium's virtual authenticator); with JavaScript off, the passkey button is absent (a sentence
// says why), a wrong password is refused on the page, and the right one goes back to the page.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, CDPSession, Page } from "playwright-core";
import { connectBrowser, gotoHydrated, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { signInWithPassword } from "../support/signin-form";
import { seedUser } from "../support/seed-user";

const USER = { email: "ada@example.com", password: "correct horse battery", name: "Ada" };

let browser: Browser;
let app: RunningApp;

beforeAll(async () => {
  [browser, app] = await Promise.all([connectBrowser(), startApp()]);
  await seedUser(app, USER);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** A platform authenticator that holds discoverable credentials and verifies its user. */
async function virtualAuthenticator(page: Page): Promise<CDPSession> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return cdp;
}

async function signInToAccount(page: Page) {
  await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
  await signInWithPassword(page, USER.email, USER.password);
  await page.waitForURL(`${app.url}/account`);
}

async function activity(page: Page): Promise<string> {
  await page.goto(`${app.url}/account`);
  return (await page.locator("main").textContent()) ?? "";
}

describe("re-authentication in Chromium", () => {
  it("with JavaScript on, the user confirms with their own passkey and comes back to the page", async () => {
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await virtualAuthenticator(page);
      await signInToAccount(page);
      await waitForHydration(page);
      await page.getByRole("button", { name: "Add a passkey for next time" }).click();
      await page.waitForURL(`${app.url}/account?updated=passkey-added#passkeys`);

      await gotoHydrated(page, `${app.url}/auth/reauth?callbackUrl=%2Faccount%3Fback%3D1`);
      await expect(page.locator("h1").textContent()).resolves.toBe("Confirm it is you");
      await page.getByRole("button", { name: "Confirm with a passkey" }).click();
      await page.waitForURL(`${app.url}/account?back=1`);
      await expect(activity(page)).resolves.toContain("Identity confirmed");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("with JavaScript off, there is no passkey button; a wrong password is refused on the page and the right one goes back", async () => {
    const context = await newContext(browser, { javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await signInToAccount(page);
      await page.goto(`${app.url}/auth/reauth?callbackUrl=%2Faccount%3Fback%3D2`);
      await expect(page.locator("#passkey-reauth").count()).resolves.toBe(0);
      await expect(page.locator("[data-passkey-unavailable]").textContent()).resolves.toBe("Confirming with a passkey needs JavaScript.");
      await page.getByLabel("Your password").fill("not the password");
      await page.getByRole("button", { name: "Confirm with password" }).click();
      await expect(page.locator("#reauth-error").textContent()).resolves.toContain("That password is not right.");
      await page.getByLabel("Your password").fill(USER.password);
      await page.getByRole("button", { name: "Confirm with password" }).click();
      await page.waitForURL(`${app.url}/account?back=2`);
    } finally {
      await context.close();
    }
  });
});
