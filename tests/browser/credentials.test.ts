// The whole credentials journey in a real Chromium against the production server, once with
// JavaScript disabled (plain forms and redirects) and once enabled (hydrated React Router).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { connectBrowser, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { signInWithPassword, submitPassword } from "../support/signin-form";
import { sessionUserLike } from "../support/session-user";

let browser: Browser;
const apps: RunningApp[] = [];

beforeAll(async () => {
  browser = await connectBrowser();
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(apps.map((a) => a.stop()));
});

for (const strategy of ["jwt", "database"] as const) {
  // One server per session strategy, started by the first journey that needs it: the journeys
  // with JavaScript off and on each have their own user and browser context.
  let started: Promise<RunningApp> | undefined;
  const appFor = () => (started ??= startApp({ AUTH_SESSION_STRATEGY: strategy }).then((app) => (apps.push(app), app)));
  for (const javaScriptEnabled of [false, true]) {
    describe(`credentials with JavaScript ${javaScriptEnabled ? "on" : "off"} (${strategy} sessions)`, () => {
      it("signs in, reads /account, renames the user and signs out", async () => {
        const app = await appFor();
        const email = `visitor-${strategy}-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
        await seedUser(app, { email, password: "correct horse battery", name: "Ada" });

        const context = await newContext(browser, { javaScriptEnabled });
        const page = await context.newPage();
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));

        // A page that needs a session sends us to sign in and back.
        await page.goto(`${app.url}/account`);
        expect(new URL(page.url()).pathname).toBe("/auth/signin");
        await expect(page.getByRole("alert").first().textContent()).resolves.toContain("Please sign in to access this page.");
        if (javaScriptEnabled) await waitForHydration(page);
        else expect(await page.evaluate(() => typeof (window as { __reactRouterContext?: unknown }).__reactRouterContext)).toBe("undefined");

        // A wrong password: same page, the message tied to the form, and the address as typed
        // still in its field (WCAG 3.3.7) while the password is not; the address never goes
        // into the URL, and only the HttpOnly step cookie keeps it, for step two's ten minutes
        // (ADR 093), until the sign-in succeeds.
        // The address is asked once (step one), then shown read-only beside the password.
        const typed = email.replace("visitor", "Visitor");
        const form = page.locator("#credentials-form");
        await signInWithPassword(page, typed, "wrong password!");
        await page.waitForURL(/error=CredentialsSignin/);
        await expect(page.locator("#credentials-error").textContent()).resolves.toBe(
          "Sign in failed. Check the details you provided are correct.",
        );
        await expect(page.getByLabel("Password").getAttribute("aria-describedby")).resolves.toContain("credentials-error");
        expect(await form.getByLabel("Email").inputValue()).toBe(typed);
        expect(await form.getByLabel("Password").inputValue()).toBe("");
        expect(page.url().toLowerCase()).not.toContain("visitor");
        const holding = (await context.cookies()).filter((c) => c.value.toLowerCase().includes("visitor"));
        expect(holding.map((c) => ({ name: c.name, httpOnly: c.httpOnly }))).toEqual([{ name: "authjs.signin-email", httpOnly: true }]);
        if (javaScriptEnabled) await waitForHydration(page);
        expect(await form.getByLabel("Email").inputValue()).toBe(typed);

        // The right password (the address left as it was) lands on the page we first asked for.
        await submitPassword(page, "correct horse battery");
        await page.waitForURL(`${app.url}/account`);
        await expect(page.locator("#profile-email").textContent()).resolves.toContain(email);
        await expect(page.locator("#profile-name").textContent()).resolves.toBe("Ada");
        const cookies = await context.cookies();
        expect(cookies.find((c) => c.name === "authjs.session-token")).toMatchObject({ httpOnly: true, sameSite: "Lax" });
        // Signed in: no cookie holds the address any more.
        expect(cookies.map((c) => c.value).join(" ").toLowerCase()).not.toContain("visitor");
        // Sessions of either strategy are listed, this device marked.
        const thisDevice = page.getByText("This device", { exact: true });
        expect(await thisDevice.count()).toBe(1);
        expect(await thisDevice.isVisible()).toBe(true);

        // Rename through the session update.
        if (javaScriptEnabled) await waitForHydration(page);
        await page.getByLabel("Display name").fill("Ada Lovelace");
        await page.getByRole("button", { name: "Save name" }).click();
        await page.getByText("Your profile was saved.").waitFor();
        await expect(page.locator("#profile-name").textContent()).resolves.toBe("Ada Lovelace");
        const session = await (await context.request.get(`${app.url}/auth/session`)).json();
        expect(session.user).toEqual(sessionUserLike({ name: "Ada Lovelace", email, image: null }));

        // An empty name is refused with a message tied to the field.
        await page.getByLabel("Display name").fill(" ");
        await page.getByRole("button", { name: "Save name" }).click();
        await page.locator("#profile-name-input-error").waitFor();
        await expect(page.getByLabel("Display name").getAttribute("aria-invalid")).resolves.toBe("true");

        // Sign out through the confirmation page.
        await page.getByRole("link", { name: "Sign out" }).first().click();
        await page.getByText("Are you sure you want to sign out?").waitFor();
        if (javaScriptEnabled) await waitForHydration(page);
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.locator("#session-status").getByText("You are not signed in.").waitFor();
        expect((await context.cookies()).find((c) => c.name === "authjs.session-token")).toBeUndefined();
        expect(await (await context.request.get(`${app.url}/auth/session`)).json()).toBeNull();

        expect(errors).toEqual([]);
        await context.close();
      });
    });
  }
}
