// ADR 081, in a real Chromium with JavaScript off against the production
// server and a real SMTP server: a sign-in from a new browser sends the owner a security e-mail;
// its "This wasn't me" link shows a page that only asks; the button signs every device out,
// removes the password and offers the reset with the address filled in; the link then is dead.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { signInWithPassword } from "../support/signin-form";
import { seedUser } from "../support/seed-user";
import { startSmtpSink, type ReceivedMessage, type SmtpSink } from "../support/smtp-sink";

let browser: Browser;
let sink: SmtpSink;
let app: RunningApp;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [browser, sink] = await Promise.all([connectBrowser(), startSmtpSink()]);
  app = await startApp({ AUTH_EMAIL_SERVER: sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>" });
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
  await app?.stop();
  await sink?.close();
});

async function newPage(): Promise<Page> {
  const context = await newContext(browser, { javaScriptEnabled: false });
  contexts.push(context);
  return context.newPage();
}

function wasntMeLinkIn(message: ReceivedMessage): string {
  return /https?:\/\/\S+\/auth\/wasnt-me\?\S+/.exec(message.text ?? "")![0];
}

async function signInToAccount(page: Page, email: string, password: string) {
  await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
  await signInWithPassword(page, email, password);
  await page.waitForURL(`${app.url}/account`);
}

describe("security e-mails in Chromium, JavaScript off", () => {
  it("a sign-in from a new browser is told by e-mail; its 'This wasn't me' link asks first, then signs every device out and removes the password", async () => {
    const email = "grace@example.com";
    await seedUser(app, { email, password: "correct horse battery", name: "Grace" });
    const thief = await newPage();
    await signInToAccount(thief, email, "correct horse battery");
    const notice = (await sink.waitFor(1)).find((m) => m.subject === "New sign-in to your Vestibule account")!;
    expect(notice.envelope.to).toEqual([email]);
    expect(notice.text).toContain("Device: Chrome on Linux");
    const link = wasntMeLinkIn(notice);

    // The owner opens the link: a page that asks, nothing done yet (the thief is still in).
    const owner = await newPage();
    await owner.goto(link);
    expect(await owner.title()).toBe("This wasn't me · Vestibule");
    await thief.reload();
    expect(new URL(thief.url()).pathname).toBe("/account");

    await owner.getByRole("button", { name: "Sign out everywhere and remove the password" }).click();
    await owner.locator("#wasnt-me-done").waitFor();
    expect(await owner.locator("#wasnt-me-done").textContent()).toContain("Every device was signed out of your account and its password was removed.");

    // The thief's session is over, and the old password no longer signs in.
    await thief.goto(`${app.url}/account`);
    await thief.waitForURL(/\/auth\/signin/);
    await signInWithPassword(thief, email, "correct horse battery");
    await thief.waitForURL(/error=CredentialsSignin/);

    // The way back: the forgotten-password page, the address filled in.
    await owner.locator("#wasnt-me-reset").click();
    await owner.waitForURL(/\/auth\/forgot-password\?email=/);
    expect(await owner.locator("#forgot-email").inputValue()).toBe(email);

    // The link is spent: opening it again says so and offers nothing to press.
    await owner.goto(link);
    await owner.locator("#wasnt-me-invalid").waitFor();
    expect(await owner.getByRole("button", { name: "Sign out everywhere and remove the password" }).count()).toBe(0);
  });
});
