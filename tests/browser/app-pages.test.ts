// A developer building pages on Vestibule (issue 33): next-auth/react works in the app's own pages
// with <SessionProvider basePath="/auth"> (the browser bundle defines what it reads of
// process.env), and no page logs a React hydration warning under `npm run dev` (the <link nonce>
// the server renders). The page is the documented example app/routes/examples/session.tsx, in
// the dev server and in the browser tests' build (VESTIBULE_EXAMPLES=1, tests/support/build-app.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { addUser, connectBrowser, gotoHydrated, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { DEMO_USER, startDevServer, type DevServer } from "../support/dev-server";
import { signInWithPassword } from "../support/signin-form";

let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await connectBrowser();
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
});

/** A page that keeps every console message and uncaught error, as text. */
async function watchedPage(): Promise<{ page: Page; messages: string[] }> {
  const context = await newContext(browser, { locale: "en-GB" });
  contexts.push(context);
  const page = await context.newPage();
  const messages: string[] = [];
  page.on("console", (m) => messages.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => messages.push(`pageerror: ${e.message}`));
  return { page, messages };
}

/** Signs in on the sign-in page with `callbackUrl=/examples/session` and waits for the example, hydrated. */
async function signInToExample(page: Page, baseUrl: string, user: { email: string; password: string }) {
  await gotoHydrated(page, `${baseUrl}/auth/signin?callbackUrl=${encodeURIComponent("/examples/session")}`);
  await signInWithPassword(page, user.email, user.password);
  await page.waitForURL(`${baseUrl}/examples/session`);
  await waitForHydration(page);
}

describe("the production build", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp();
    addUser(app, { email: "ada@example.com", password: "correct horse battery staple", name: "Ada" });
  });
  afterAll(() => app?.stop());

  it("a page using next-auth/react's SessionProvider basePath=\"/auth\" shows the signed-in address, and useSession() from ~/auth/react shows it from the first paint", async () => {
    const { page, messages } = await watchedPage();
    await signInToExample(page, app.url, { email: "ada@example.com", password: "correct horse battery staple" });
    await expect.poll(() => page.locator("#next-auth-session").textContent()).toBe("Signed in as ada@example.com.");
    expect(await page.locator("#app-session").textContent()).toBe("Signed in as ada@example.com.");
    expect(messages.filter((m) => /process is not defined|pageerror/.test(m))).toEqual([]);
  });

  it("a visitor who signs out reads 'Not signed in' from both hooks on the example page", async () => {
    const { page } = await watchedPage();
    await signInToExample(page, app.url, { email: "ada@example.com", password: "correct horse battery staple" });
    await gotoHydrated(page, `${app.url}/auth/signout`);
    await page.locator('form[action="/auth/signout"] button[type="submit"]').click();
    await page.waitForURL((url) => !url.pathname.startsWith("/auth/signout"));
    await gotoHydrated(page, `${app.url}/examples/session`);
    expect(await page.locator("#app-session").textContent()).toBe("Not signed in.");
    await expect.poll(() => page.locator("#next-auth-session").textContent()).toBe("Not signed in.");
  });
});

describe("npm run dev", () => {
  let dev: DevServer;
  beforeAll(async () => {
    dev = await startDevServer();
  });
  afterAll(() => dev?.stop());

  it("a developer opening the pages (signed out, then signed in on the next-auth/react example) sees no React hydration warning and no error", async () => {
    // Vite finds and bundles each page's dependencies on its first visit and reloads the page:
    // one visit each first, so the checked visits load what a developer sees after that.
    const warm = await watchedPage();
    for (const path of ["/", "/auth/signin", "/examples/session"]) await warm.page.goto(`${dev.url}${path}`, { waitUntil: "networkidle" });
    await warm.page.close();

    const { page, messages } = await watchedPage();
    const problems = () => messages.filter((m) => /hydrat|did(n't| not) match|pageerror|process is not defined/i.test(m));
    try {
      for (const path of ["/", "/auth/signin"]) await gotoHydrated(page, `${dev.url}${path}`);
      await signInToExample(page, dev.url, DEMO_USER);
      await expect.poll(() => page.locator("#next-auth-session").textContent()).toBe(`Signed in as ${DEMO_USER.email}.`);
      await gotoHydrated(page, `${dev.url}/account`);
    } catch (error) {
      // A page that never hydrates says why: the browser's messages.
      throw new Error(`${(error as Error).message}\nbrowser messages:\n${problems().join("\n")}`);
    }
    expect(problems()).toEqual([]);
  });
});
