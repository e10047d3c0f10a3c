// The app's own page of docs/build-your-app.md (app/routes/examples/profile.tsx) in Chromium with
// JavaScript on: the sign-in comes back to the page, its form goes through React Router's fetch
// (`/examples/profile.data`), and when the session ended meanwhile, the page says to sign in with a
// link that comes back to the page itself — never to its data request (ADR 118).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { addUser, connectBrowser, gotoHydrated, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { signInWithPassword } from "../support/signin-form";

let browser: Browser;
let app: RunningApp;
const contexts: BrowserContext[] = [];
const ADA = { email: "ada@example.com", password: "correct horse battery staple", name: "Ada" };

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startApp();
  addUser(app, ADA);
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
  app?.stop();
});

describe("a protected page and its form, JavaScript on", () => {
  it("signs in and comes back; the form is sent; a session ended meanwhile gets a sign-in link back to the page", async () => {
    const context = await newContext(browser, { locale: "en-GB" });
    contexts.push(context);
    const page = await context.newPage();
    const dataRequests: string[] = [];
    page.on("request", (r) => {
      if (new URL(r.url()).pathname.endsWith(".data")) dataRequests.push(r.url());
    });

    await page.goto(`${app.url}/examples/profile`);
    await page.waitForURL((url) => url.pathname === "/auth/signin" && url.searchParams.get("callbackUrl") === "/examples/profile");
    await waitForHydration(page);
    await signInWithPassword(page, ADA.email, ADA.password);
    await page.waitForURL(`${app.url}/examples/profile`);
    await waitForHydration(page);
    expect(await page.locator("#profile-email").textContent()).toBe("Signed in as ada@example.com.");

    await page.getByRole("button", { name: "Confirm it is me" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Confirmed: you signed in moments ago.");
    expect(dataRequests.some((u) => new URL(u).pathname === "/examples/profile.data")).toBe(true);

    // The session ends while the page is open (another tab signed out): the next form is refused.
    await context.clearCookies();
    await page.getByRole("button", { name: "Confirm it is me" }).click();
    const link = page.locator("#session-required-signin");
    await link.waitFor();
    const href = new URL((await link.getAttribute("href"))!, app.url);
    expect(href.pathname).toBe("/auth/signin");
    expect(href.searchParams.get("callbackUrl")).toBe("/examples/profile");
    await link.click();
    await page.waitForURL((url) => url.pathname === "/auth/signin");
    await waitForHydration(page);
    await signInWithPassword(page, ADA.email, ADA.password);
    await page.waitForURL(`${app.url}/examples/profile`);
    await gotoHydrated(page, `${app.url}/examples/profile`);
    expect(await page.locator("#profile-email").textContent()).toBe("Signed in as ada@example.com.");
  });
});
