// /admin with JavaScript off under `npm start` (contract §18, ADR 085): an admin searches for a
// user with the accents left out, opens their page and disables them — plain links and form
// posts all the way — and the user's own sign-in is then refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { connectBrowser, newContext, setUserRole, startApp, type RunningApp } from "../support/browser";
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
