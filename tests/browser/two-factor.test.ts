// The second factor in a real Chromium against the production server: turning TOTP on from
// /account (the code computed from the secret the page shows, as an authenticator app would),
// the recovery codes shown once, a sign-in that stops at /auth/two-factor, a wrong code refused at
// its field, the right code and a recovery code finishing the sign-in, and turning it off — with
// JavaScript off (plain forms and redirects) and on (hydrated React Router).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { totpCodeAt, totpStep } from "../../app/auth/two-factor/totp.server";
import { connectBrowser, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { signInWithPassword as fillSignInForm } from "../support/signin-form";

let browser: Browser;
const apps: RunningApp[] = [];

beforeAll(async () => {
  browser = await connectBrowser();
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(apps.map((a) => a.stop()));
});

const PASSWORD = "correct horse battery";
const code = (secret: string, offset = 0) => totpCodeAt(secret, totpStep(new Date()) + offset);

// One server for both journeys, started by the first: each has its own user and browser context.
let started: Promise<RunningApp> | undefined;
const appFor = () => (started ??= startApp({ AUTH_SESSION_STRATEGY: "database" }).then((app) => (apps.push(app), app)));

for (const javaScriptEnabled of [false, true]) {
  describe(`the second factor with JavaScript ${javaScriptEnabled ? "on" : "off"}`, () => {
    it("turns TOTP on, signs in with a code and with a recovery code, and turns it off", async () => {
      const app = await appFor();
      const email = `totp-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await seedUser(app, { email, password: PASSWORD, name: "Tess" });
      const context = await newContext(browser, { javaScriptEnabled });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));

      const signInWithPassword = async () => {
        await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
        if (javaScriptEnabled) await waitForHydration(page);
        await fillSignInForm(page, email, PASSWORD);
      };
      const signOut = async () => {
        await page.goto(`${app.url}/auth/signout`);
        if (javaScriptEnabled) await waitForHydration(page);
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.locator("#session-status").getByText("You are not signed in.").waitFor();
      };

      // Signed in with the password alone while the second factor is off.
      await signInWithPassword();
      await page.waitForURL(`${app.url}/account`);
      if (javaScriptEnabled) await waitForHydration(page);
      await expect(page.locator("#two-factor-status").textContent()).resolves.toContain("Off");

      // Set up: the secret as text and as a server-drawn QR code, confirmed with a first code.
      await page.getByRole("button", { name: "Set up an authenticator app" }).click();
      const secretElement = page.locator("[data-totp-secret]");
      await secretElement.waitFor();
      const secret = (await secretElement.getAttribute("data-totp-secret"))!;
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      // Shown in groups of four for reading and typing; the same key without the spaces.
      expect((await secretElement.textContent())!.replaceAll(" ", "")).toBe(secret);
      expect(await page.locator("svg.qr-code path").count()).toBe(1);
      await expect(page.locator("svg.qr-code").getAttribute("role")).resolves.toBe("img");
      // A wrong first code: refused at the field, still off.
      await page.getByLabel("Code from the app").fill(code(secret, 4));
      await page.getByRole("button", { name: "Turn on" }).click();
      await page.locator("#totp-confirm-code-error").waitFor();
      await expect(page.getByLabel("Code from the app").getAttribute("aria-invalid")).resolves.toBe("true");
      await expect(page.locator('[data-error-for="code"]').getAttribute("role")).resolves.toBe("alert");
      await page.getByLabel("Code from the app").fill(code(secret));
      await page.getByRole("button", { name: "Turn on" }).click();
      await page.locator("[data-recovery-code]").first().waitFor();
      const recoveryCodes = await page.locator("[data-recovery-code]").evaluateAll((els) => els.map((e) => e.getAttribute("data-recovery-code")!));
      expect(recoveryCodes).toHaveLength(10);
      // Shown once: the page, loaded again, has none of them.
      await page.goto(`${app.url}/account`);
      expect(await page.locator("[data-recovery-code]").count()).toBe(0);
      await expect(page.locator("#two-factor-status").textContent()).resolves.toContain("10 recovery codes left");
      await signOut();

      // The password now leads to the second-factor page, with no session yet.
      await signInWithPassword();
      await page.waitForURL(`${app.url}/auth/two-factor`);
      expect(await page.title()).toBe("Two-step verification · Vestibule");
      expect(await (await context.request.get(`${app.url}/auth/session`)).json()).toBeNull();
      const field = page.getByLabel("Code");
      await expect(field.getAttribute("autocomplete")).resolves.toBe("one-time-code");
      await expect(field.getAttribute("inputmode")).resolves.toBe("numeric");
      if (javaScriptEnabled) await waitForHydration(page);
      await field.fill("000000");
      await page.getByRole("button", { name: "Verify" }).click();
      await page.locator("#two-factor-code-error").waitFor();
      await expect(page.locator("#two-factor-code-error").textContent()).resolves.toContain("4 tries left");
      await expect(page.getByLabel("Code").getAttribute("aria-describedby")).resolves.toBe("two-factor-code-error");
      // The next step's code (the enrolment used the current one).
      await page.getByLabel("Code").fill(code(secret, 1));
      await page.getByRole("button", { name: "Verify" }).click();
      await page.waitForURL(`${app.url}/account`);
      await expect(page.locator("#profile-email").textContent()).resolves.toContain(email);
      expect((await context.cookies()).find((c) => c.name === "authjs.two-factor")).toBeUndefined();
      await signOut();

      // A recovery code instead of the app.
      await signInWithPassword();
      await page.waitForURL(`${app.url}/auth/two-factor`);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.getByLabel("Code").fill(recoveryCodes[0]!);
      await page.getByRole("button", { name: "Verify" }).click();
      // The page says a recovery code was used, how many are left, and links to new ones.
      await page.waitForURL((url) => url.pathname === "/account" && url.searchParams.get("updated") === "recovery-code-used");
      await expect(page.locator("#recovery-code-used").textContent()).resolves.toContain("You have 9 recovery codes left.");
      await expect(page.locator("#recovery-code-used").getByRole("link", { name: "Get new recovery codes" }).getAttribute("href")).resolves.toBe("#recovery-codes-code-form");
      await expect(page.locator("#recovery-codes-code-form").count()).resolves.toBe(1);
      await expect(page.locator("#two-factor-status").textContent()).resolves.toContain("9 recovery codes left");
      await expect(page.locator('#activity [data-event="recovery-code-used"]').count()).resolves.toBe(1);

      // Turning it off needs a current code: a used recovery code is refused, an unused one works.
      if (javaScriptEnabled) await waitForHydration(page);
      await page.getByLabel("Current code from your authenticator app, or a recovery code (to turn it off)").fill(recoveryCodes[0]!);
      await page.getByRole("button", { name: "Turn off two-step verification" }).click();
      await page.locator("#totp-disable-code-error").waitFor();
      await page.getByLabel("Current code from your authenticator app, or a recovery code (to turn it off)").fill(recoveryCodes[1]!);
      await page.getByRole("button", { name: "Turn off two-step verification" }).click();
      await page.getByText("The second factor was turned off.").waitFor();
      await expect(page.locator("#two-factor-status").textContent()).resolves.toContain("Off");
      await signOut();
      await signInWithPassword();
      await page.waitForURL(`${app.url}/account`);

      expect(errors).toEqual([]);
      await context.close();
      // The whole second-factor life cycle in one test: more than the project's test time.
    }, 240_000);
  });
}
