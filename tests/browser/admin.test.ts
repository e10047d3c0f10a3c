// /admin with JavaScript off under `npm start` (ADR 085): an admin searches for a
// user with the accents left out, opens their page and disables them — plain links and form
// posts all the way — and the user's own sign-in is then refused. With JavaScript on, an admin
// whose sign-in is over AUTH_ADMIN_REAUTH_MAX_AGE old is sent to sign in again (ADR 110).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { connectBrowser, gotoHydrated, newContext, setUserRole, startApp, type RunningApp } from "../support/browser";
import { ageSessionsOf } from "../support/age-session";
import { signInWithPassword } from "../support/signin-form";
import { seedUser } from "../support/seed-user";

const ADMIN = { email: "admin@example.com", password: "correct horse battery staple", name: "Admin" };
const GRACE = { email: "grace@example.com", password: "correct horse battery staple", name: "Grâce Hopper" };

let app: RunningApp;
let browser: Browser;
beforeAll(async () => {
  [app, browser] = await Promise.all([startApp(), connectBrowser()]);
  await seedUser(app, ADMIN);
  await seedUser(app, GRACE);
  setUserRole(app, ADMIN.email, "admin");
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function signIn(user: { email: string; password: string }) {
  const context = await newContext(browser, { javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${app.url}/auth/signin`);
  await signInWithPassword(page, user.email, user.password);
  return { context, page };
}

describe("/admin without JavaScript", () => {
  it("an admin searches 'GRACE HOPPER', opens Grâce's page and disables her; her next sign-in is refused", async () => {
    const { context, page } = await signIn(ADMIN);
    await page.waitForURL(`${app.url}/`);
    await page.goto(`${app.url}/admin`);
    await page.getByLabel("Address or name").fill("GRACE HOPPER");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/\/admin\?q=GRACE\+HOPPER/);
    const rows = page.locator("#admin-users tbody tr");
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByRole("link", { name: GRACE.email }).click();
    await page.waitForURL(/\/admin\/users\/[A-Za-z0-9_-]+$/);
    expect(await page.locator("h1").textContent()).toBe(GRACE.email);
    expect(await page.locator("#admin-state").textContent()).toBe("Enabled");

    await page.getByRole("button", { name: "Disable the account" }).click();
    await page.waitForURL(/\?done=disabled$/);
    expect(await page.getByRole("status").textContent()).toContain("The account is disabled");
    expect(await page.locator("#admin-state").textContent()).toBe("Disabled");
    await context.close();

    const grace = await signIn(GRACE);
    await grace.page.waitForURL(/error=CredentialsSignin/);
    await grace.context.close();
  });
});

describe("/admin with JavaScript, past AUTH_ADMIN_REAUTH_MAX_AGE", () => {
  it("an admin whose sign-in is an hour old opens a user's page from the list (a .data request): the page offers to sign in again, and the password brings the admin back to that page", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${app.url}/auth/signin`);
    await signInWithPassword(page, ADMIN.email, ADMIN.password);
    await page.waitForURL(`${app.url}/`);
    await gotoHydrated(page, `${app.url}/admin?q=grace`);
    await expect.poll(() => page.locator("#admin-users tbody tr").count()).toBe(1);

    // An hour and a minute pass (the session's sign-in is moved back; no waiting).
    expect(await ageSessionsOf(app, ADMIN.email, 61)).toBeGreaterThan(0);
    const userLink = page.getByRole("link", { name: GRACE.email });
    const userPath = await userLink.getAttribute("href");
    expect(userPath).toMatch(/^\/admin\/users\/[A-Za-z0-9_-]+$/);
    await userLink.click();
    const again = page.getByRole("link", { name: "Sign in again" });
    await again.waitFor();
    expect(await again.getAttribute("href")).toBe(`/auth/reauth?${new URLSearchParams({ callbackUrl: userPath! })}`);
    expect(await page.locator("body").textContent()).not.toContain(GRACE.email);

    await again.click();
    await page.locator("#reauth-password").fill(ADMIN.password);
    await page.locator("#reauth-password-form [type=submit]").click();
    await page.waitForURL(`${app.url}${userPath}`);
    expect(await page.locator("h1").textContent()).toBe(GRACE.email);
    await context.close();
  });
});
