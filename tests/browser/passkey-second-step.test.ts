// AUTH_REQUIRE_MFA=true with a passkey as the user's second factor (ADR 104), in a real Chromium
// against the production server with the DevTools WebAuthn virtual authenticator: the user held
// at the set-up adds a passkey from /account and goes on; signed out, a sign-in with the password
// stops at /auth/two-factor, whose passkey button finishes it. With JavaScript off the same step
// has no button and no code field (the user has no TOTP) but a sentence saying what to do, and
// no session is started.
import AxeBuilder from "@axe-core/playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { connectBrowser, gotoHydrated, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { signInWithPassword } from "../support/signin-form";

const USER = { email: "ada@example.com", password: "correct horse battery", name: "Ada" };

let browser: Browser;
let app: RunningApp;

beforeAll(async () => {
  [browser, app] = await Promise.all([connectBrowser(), startApp({ AUTH_REQUIRE_MFA: "true" })]);
  await seedUser(app, USER);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function sessionEmail(page: Page): Promise<string | null> {
  const session = await page.evaluate(async () => (await fetch("/auth/session")).json());
  return session?.user?.email ?? null;
}

describe("the passkey as the second step of a password sign-in, under required MFA", () => {
  it("adds a passkey at the set-up, then a password sign-in stops at the second step and the passkey finishes it", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    // The sign-in page's autofill request (conditional mediation) is held, so that the virtual
    // authenticator never signs in with the passkey where this test types the password.
    await page.addInitScript(() => {
      const get = navigator.credentials.get.bind(navigator.credentials);
      navigator.credentials.get = (options?: CredentialRequestOptions) => {
        if (options?.mediation !== "conditional") return get(options);
        return new Promise((_, reject) => options.signal?.addEventListener("abort", () => reject(new DOMException("ended", "AbortError"))));
      };
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });

    // Held at the set-up: the passkey is added there, and the session goes on with it.
    await gotoHydrated(page, `${app.url}/auth/signin?callbackUrl=%2Faccount`);
    await signInWithPassword(page, USER.email, USER.password);
    await page.waitForURL(`${app.url}/account`);
    await waitForHydration(page);
    await page.locator("#second-factor-required").waitFor();
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await page.waitForURL(`${app.url}/account?updated=passkey-added#passkeys`);
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    await page.goto(`${app.url}/`);
    expect(new URL(page.url()).pathname).toBe("/");

    // Signed out, the password alone: the second step, no session yet.
    await page.goto(`${app.url}/auth/signout`);
    await waitForHydration(page);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#session-status").getByText("You are not signed in.").waitFor();
    await gotoHydrated(page, `${app.url}/auth/signin?callbackUrl=%2Faccount`);
    await signInWithPassword(page, USER.email, USER.password);
    await page.waitForURL(`${app.url}/auth/two-factor`);
    await waitForHydration(page);
    expect(await sessionEmail(page)).toBeNull();
    await expect(page.locator("#two-factor-code").count()).resolves.toBe(0);
    // The step as the visitor gets it passes axe (the same WCAG tags as tests/browser/a11y.test.ts).
    const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
    expect(axe.violations.map((v) => v.id)).toEqual([]);
    await page.getByRole("button", { name: "Use my passkey" }).click();
    await page.waitForURL(`${app.url}/account`);
    expect(await sessionEmail(page)).toBe(USER.email);
    await expect(page.locator("#second-factor-required").count()).resolves.toBe(0);
    await expect(page.locator("#sessions li[data-current] [data-factors]").getAttribute("data-factors")).resolves.toBe("pwd hwk mfa");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("with JavaScript off the step says how to go on, offers no code the user does not have, and starts no session", async () => {
    const context = await newContext(browser, { javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
    await signInWithPassword(page, USER.email, USER.password);
    await page.waitForURL(`${app.url}/auth/two-factor`);
    await expect(page.locator("#second-step-passkey").textContent()).resolves.toBe("Your passkey needs JavaScript. Turn JavaScript on, or sign in from a browser that has it.");
    await expect(page.locator("#two-factor-code").count()).resolves.toBe(0);
    await expect(page.getByRole("link", { name: "Sign in another way" }).count()).resolves.toBe(1);
    await page.goto(`${app.url}/account`);
    expect(new URL(page.url()).pathname).toBe("/auth/signin");
    await context.close();
  });
});
