// Delete my account in a real Chromium with JavaScript off, against the production server and a
// real SMTP server (ADR 086): sign in, type the word the page shows, confirm; the
// browser is signed out on the home page, the address hears of it, and the same address signs up
// again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { signInWithPassword } from "../support/signin-form";
import { seedUser } from "../support/seed-user";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";

let browser: Browser;
let sink: SmtpSink;
let app: RunningApp;
let context: BrowserContext;

beforeAll(async () => {
  [browser, sink] = await Promise.all([connectBrowser(), startSmtpSink()]);
  app = await startApp({ AUTH_EMAIL_SERVER: sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>", AUTH_SIGNUP: "true" });
});

afterAll(async () => {
  await context?.close().catch(() => {});
  await browser?.close();
  await app?.stop();
  await sink?.close();
});

describe("delete my account in Chromium, JavaScript off", () => {
  it("type the word, confirm: signed out, told by e-mail, and the address signs up again", async () => {
    const email = "leaving@example.com";
    await seedUser(app, { email, password: "correct horse battery", name: "Lea" });
    context = await newContext(browser, { javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
    await signInWithPassword(page, email, "correct horse battery");
    await page.waitForURL(`${app.url}/account`);

    // A wrong word: back to the page (a redirect, ADR 178), the section's notice says why, nothing deleted.
    const confirm = page.getByLabel("To confirm, type DELETE");
    await confirm.fill("delete");
    await page.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL((url) => url.searchParams.get("refused") === "deleteWord");
    expect(await page.locator("#delete-account-notice").textContent()).toContain("DELETE");

    const before = sink.messages.length;
    await page.getByLabel("To confirm, type DELETE").fill("DELETE");
    await page.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL(`${app.url}/?deleted=account`);
    expect(await page.locator("#account-deleted").textContent()).toMatch(/Your account was deleted/);
    expect(await page.locator("#session-status").textContent()).toBe("You are not signed in.");
    await page.goto(`${app.url}/account`);
    expect(new URL(page.url()).pathname).toBe("/auth/signin");
    const notice = (await sink.waitFor(before + 1)).at(-1)!;
    expect(notice.envelope.to).toEqual([email]);
    expect(notice.subject).toMatch(/account was deleted/);

    // The same address signs up again.
    await page.goto(`${app.url}/auth/signup`);
    await page.locator("#signup-email").fill(email);
    await page.locator("#signup-name").fill("Lea");
    await page.locator("#signup-password").fill("velvet lantern orbit");
    const asked = sink.messages.length;
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(/\/auth\/verify-request\?provider=email&type=signup$/);
    const message = (await sink.waitFor(asked + 1)).at(-1)!;
    const code = /code in the browser where you asked: (\d{6})/.exec(message.text ?? "")![1]!;
    await page.locator("#email-code-input").fill(code);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(/\/welcome/);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Welcome, Lea!");
  });
});
