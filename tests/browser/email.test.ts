// E-mail link sign-in in a real Chromium against the production server and a real SMTP server:
// the link is asked for with JavaScript off, and opened in a fresh browser context (another
// device), which lands signed in. Then the same with AUTH_EMAIL_CONFIRM=true, where the link
// shows a "Sign in as …" button.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { connectBrowser, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { isSecurityNotice, linkIn, startSmtpSink, waitForMessages, type SmtpSink } from "../support/smtp-sink";
import { requestEmailSignIn, SIGNIN } from "../support/signin-form";

let browser: Browser;
let sink: SmtpSink;
const apps: RunningApp[] = [];
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [browser, sink] = await Promise.all([connectBrowser(), startSmtpSink()]);
});

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  await browser?.close();
  await Promise.all(apps.map((a) => a.stop()));
  await sink?.close();
});

// One server per configuration, started by the first test that asks for it: the tests sign in
// different addresses in their own browser contexts. docs/decisions/088-test-suite-time.md
const servers = new Map<string, Promise<RunningApp>>();

function app(env: Record<string, string> = {}): Promise<RunningApp> {
  const key = JSON.stringify(env);
  let server = servers.get(key);
  if (!server) {
    server = startApp({ AUTH_EMAIL_SERVER: sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>", ...env }).then((started) => (apps.push(started), started));
    servers.set(key, server);
  }
  return server;
}

async function context(javaScriptEnabled: boolean) {
  const c = await newContext(browser, { javaScriptEnabled });
  contexts.push(c);
  return c;
}

/** Asks for a link on the sign-in page with JavaScript off; returns the link that arrived. */
async function askForLink(url: string, email: string): Promise<URL> {
  // The security e-mails of earlier sign-ins from new browsers go out at their own pace (ADR 081).
  const asked = sink.messages.filter((m) => !isSecurityNotice(m)).length;
  const page = await (await context(false)).newPage();
  await page.goto(`${url}/account`);
  expect(new URL(page.url()).pathname).toBe("/auth/signin");
  expect(await page.evaluate(() => typeof (window as { __reactRouterContext?: unknown }).__reactRouterContext)).toBe("undefined");

  // First a value the browser lets through but the server refuses: the message sits at the
  // address field of the form's first step, which keeps what was typed.
  await page.locator(SIGNIN.addressInput).fill("someone@localhost");
  await page.locator(`${SIGNIN.addressForm} button[type="submit"]`).click();
  await page.waitForURL(/error=EmailInvalid/);
  const described = await page.locator(SIGNIN.addressInput).getAttribute("aria-describedby");
  expect(described).toBeTruthy();
  await expect(page.locator(`#${described}`).textContent()).resolves.toBe(
    "Unable to sign in. Enter one e-mail address, such as name@example.com.",
  );
  await expect(page.locator(SIGNIN.addressInput).getAttribute("aria-invalid")).resolves.toBe("true");
  expect(await page.locator(SIGNIN.addressInput).inputValue()).toBe("someone@localhost");
  expect(sink.messages.filter((m) => !isSecurityNotice(m)).length).toBe(asked);

  await requestEmailSignIn(page, email);
  await page.waitForURL(/\/auth\/verify-request\?provider=email&type=email$/);
  await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Check your email");
  await expect(page.locator("main").textContent()).resolves.toContain("expires after 24 hours");

  const message = (await waitForMessages(sink, asked + 1))[asked]!;
  expect(message.envelope.to).toEqual([email.trim().toLowerCase()]);
  // The browser that asked is still signed out: the link is what signs in.
  await page.goto(`${url}/auth/session`);
  await expect(page.locator("body").textContent()).resolves.toBe("null");
  return linkIn(message);
}

describe("e-mail link sign-in in Chromium", () => {
  it("asked for with JavaScript off, opened on another device: signed in on /welcome, then /account", async () => {
    const running = await app();
    const link = await askForLink(running.url, " Reader@Example.com");
    expect(link.origin).toBe(running.url);
    expect(link.searchParams.get("callbackUrl")).toBe(`${running.url}/account`);

    const phone = await (await context(false)).newPage();
    await phone.goto(link.href);
    expect(new URL(phone.url()).pathname).toBe("/welcome");
    await expect(phone.locator("main").textContent()).resolves.toContain("reader@example.com");
    await phone.getByRole("link", { name: "Continue" }).click();
    await phone.waitForURL(`${running.url}/account`);
    await expect(phone.locator("#profile-email").textContent()).resolves.toContain("reader@example.com (verified)");

    // The same link a second time: the Verification page, 403.
    const again = await (await context(false)).newPage();
    const response = await again.goto(link.href);
    expect(new URL(again.url()).pathname).toBe("/auth/error");
    expect(response!.status()).toBe(403);
    await expect(again.getByRole("alert").textContent()).resolves.toBe("The sign-in link is no longer valid.");
  });

  for (const javaScriptEnabled of [false, true]) {
    it(`AUTH_EMAIL_CONFIRM=true: the link shows "Sign in as …", the button signs in (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
      const running = await app({ AUTH_EMAIL_CONFIRM: "true" });
      const link = await askForLink(running.url, `confirm-${javaScriptEnabled ? "js" : "nojs"}@example.com`);

      // A mail scanner fetches the link first, without cookies: nothing is used up.
      const scan = await fetch(link, { redirect: "manual" });
      expect(scan.status).toBe(200);
      expect(scan.headers.get("cache-control")).toBe("private, no-store");
      expect(scan.headers.getSetCookie().some((c) => c.includes("session-token"))).toBe(false);

      const phone = await (await context(javaScriptEnabled)).newPage();
      await phone.goto(link.href);
      expect(new URL(phone.url()).pathname).toBe("/auth/callback/email");
      const address = `confirm-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      await expect(phone.locator("#confirm-address").textContent()).resolves.toBe(address);
      await phone.getByRole("button", { name: `Sign in as ${address}` }).click();
      await phone.waitForURL(/\/welcome\?callbackUrl=%2Faccount$/);
      await phone.goto(`${running.url}/auth/session`);
      await expect(phone.locator("body").textContent()).resolves.toContain(`"email":"${address}"`);
    });
  }

  for (const javaScriptEnabled of [false, true]) {
    it(`an Arabic visitor types the e-mailed code with her keyboard's Arabic-Indic digits: signed in (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
      const running = await app();
      const email = `arabic-code-${javaScriptEnabled ? "js" : "nojs"}@example.com`;
      const page = await (await newContext(browser, { javaScriptEnabled, locale: "ar" }).then((c) => (contexts.push(c), c))).newPage();
      await page.goto(`${running.url}/auth/signin?callbackUrl=%2Faccount`);
      if (javaScriptEnabled) await waitForHydration(page);
      const asked = sink.messages.filter((m) => !isSecurityNotice(m)).length;
      await requestEmailSignIn(page, email);
      if (javaScriptEnabled) await waitForHydration(page);
      const message = (await waitForMessages(sink, asked + 1))[asked]!;
      const code = /\b(\d{6})\b/.exec(message.text ?? "")![1]!;
      const arabic = [...code].map((d) => String.fromCodePoint(0x0660 + Number(d))).join("");
      await page.locator("#email-code-input").fill(arabic);
      await page.locator('#email-code-form button[type="submit"]').click();
      await page.waitForURL(`${running.url}/welcome?callbackUrl=%2Faccount`);
      await expect(page.locator("main").textContent()).resolves.toContain(email);
    });
  }

  it("changes the address from /account with JavaScript off: link to the new address, confirmed in the browser that asked; other devices end", async () => {
    const running = await app();
    const phone = await (await context(false)).newPage();
    await phone.goto((await askForLink(running.url, "before@example.com")).href);
    const link = await askForLink(running.url, "before@example.com");
    const laptop = await (await context(false)).newPage();
    await laptop.goto(link.href);
    await laptop.goto(`${running.url}/account`);

    const form = laptop.locator("#email-change-form");
    await form.getByLabel("New e-mail address").fill("after@example.com");
    await form.getByRole("button", { name: "Send me a link" }).click();
    await expect(laptop.locator("#email-change-sent").textContent()).resolves.toContain("We sent a link to after@example.com.");
    await expect(laptop.locator("#profile-email").textContent()).resolves.toContain("before@example.com");

    const message = (await sink.waitFor(sink.messages.length)).findLast((m) => m.envelope.to.includes("after@example.com"))!;
    expect(message.envelope.to).toEqual(["after@example.com"]);
    // The link is confirmed by a recent sign-in of the account that asked (ADR 058): here, the laptop.
    await laptop.goto(linkIn(message).href);
    await expect(laptop.locator("#confirm-address").textContent()).resolves.toBe("after@example.com");
    await laptop.getByRole("button", { name: "Use after@example.com" }).click();
    // Confirmed in the signed-in browser: back on /account, which says so and shows the new address.
    await expect(laptop.getByRole("status").textContent()).resolves.toContain("Your e-mail address was changed.");
    await expect(laptop.locator("#profile-email").textContent()).resolves.toContain("after@example.com (verified)");

    // The change ended the user's other sessions: the phone signs in again.
    await phone.goto(`${running.url}/account`);
    expect(new URL(phone.url()).pathname).toBe("/auth/signin");
  });

  it("the production server has no /dev/outbox", async () => {
    const running = apps[0] ?? (await app());
    const res = await fetch(`${running.url}/dev/outbox`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("Dev outbox");
  });
});
