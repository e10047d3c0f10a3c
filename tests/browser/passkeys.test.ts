// Passkeys in a real Chromium against the production server, with the DevTools WebAuthn virtual
// authenticator (a platform authenticator with resident keys and user verification): register
// from /account, sign out, sign in with the passkey from the sign-in page; and sign in through
// next-auth/webauthn's own signIn("passkey"), bundled from node_modules and loaded in a page of
// the app's origin, which proves the wire protocol. With JavaScript off, the passkey buttons are
// replaced by a sentence and the password form still signs in.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";
import { connectBrowser, gotoHydrated, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { SIGNIN, signInWithPassword } from "../support/signin-form";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const USER = { email: "ada@example.com", password: "correct horse battery", name: "Ada" };

let browser: Browser;
let app: RunningApp;
let nextAuthBundle: string;

beforeAll(async () => {
  // next-auth/webauthn as a Next.js app's browser bundle would carry it; its base path set to
  // ours (/auth) the way <SessionProvider basePath> does.
  const bundled = await build({
    stdin: {
      contents: [
        'import { signIn } from "next-auth/webauthn";',
        'import { __NEXTAUTH } from "next-auth/react";',
        '__NEXTAUTH.basePath = "/auth";',
        "window.nextAuthWebauthn = { signIn };",
      ].join("\n"),
      resolveDir: root,
      loader: "js",
    },
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    define: { "process.env": "{}", "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  nextAuthBundle = bundled.outputFiles[0]!.text;
  [browser, app] = await Promise.all([connectBrowser(), startApp()]);
  await seedUser(app, USER);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** A platform authenticator that holds discoverable credentials and verifies its user. */
async function virtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

async function signInWithPasswordToAccount(page: Page) {
  await gotoHydrated(page, `${app.url}/auth/signin?callbackUrl=%2Faccount`);
  await signInWithPassword(page, USER.email, USER.password);
  await page.waitForURL(`${app.url}/account`);
}

async function signOut(page: Page) {
  await page.goto(`${app.url}/auth/signout`);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(`${app.url}/`);
  expect(await sessionEmail(page)).toBeNull();
}

async function sessionEmail(page: Page): Promise<string | null> {
  const session = await page.evaluate(async () => (await fetch("/auth/session")).json());
  return session?.user?.email ?? null;
}

describe("passkeys in Chromium with a virtual authenticator", () => {
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  const errors: string[] = [];

  beforeAll(async () => {
    context = await newContext(browser);
    page = await context.newPage();
    page.on("pageerror", (e) => errors.push(e.message));
    ({ cdp, authenticatorId } = await virtualAuthenticator(page));
  });
  afterAll(() => context?.close());

  it("registers a passkey from /account (offered right after the sign-in)", async () => {
    await signInWithPasswordToAccount(page);
    await waitForHydration(page);
    await expect(page.locator("#passkey-offer").textContent()).resolves.toContain("Add a passkey for next time");
    // A double click, as an impatient visitor gives: one ceremony, one passkey (issue 32).
    await page.getByRole("button", { name: "Add a passkey for next time" }).dblclick();
    await page.waitForURL(`${app.url}/account?updated=passkey-added#passkeys`);
    await expect(page.locator("#passkey-list li").count()).resolves.toBe(1);
    // Named after the device that made it, not a bare "Passkey".
    await expect(page.locator("#passkey-list [data-passkey-name]").textContent()).resolves.toBe("Passkey (Chrome on Linux)");
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    // Once there is a passkey, no more offers.
    await page.goto(`${app.url}/account`);
    await expect(page.locator("#passkey-offer").count()).resolves.toBe(0);
  });

  it("signs out, then signs in with the passkey the browser's autofill offers on the sign-in page (conditional UI)", async () => {
    await signOut(page);
    // The page starts a conditional request; the virtual authenticator answers it as a person
    // picking the passkey from the autofill would. Nothing is typed or clicked.
    await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
    await page.waitForURL(`${app.url}/account`);
    expect(await sessionEmail(page)).toBe(USER.email);
    // The session records the method, and the passkey its last use.
    await expect(page.locator("#sessions li[data-current]").textContent()).resolves.toContain("Signed in with a passkey");
    await expect(page.locator("#passkey-list").textContent()).resolves.not.toContain("last used never");
  });

  it("signs in with the sign-in page's passkey button", async () => {
    await signOut(page);
    // The autofill's request (conditional mediation) is held in the page until it is ended, so the
    // authenticator can only answer the button's: left to the authenticator, the autofill could
    // answer first, and the button would never be used.
    await page.addInitScript(() => {
      const get = navigator.credentials.get.bind(navigator.credentials);
      navigator.credentials.get = (options?: CredentialRequestOptions) => {
        if (options?.mediation !== "conditional") return get(options);
        return new Promise((_, reject) => options.signal?.addEventListener("abort", () => reject(new DOMException("ended", "AbortError"))));
      };
    });
    await gotoHydrated(page, `${app.url}/auth/signin?callbackUrl=%2Faccount`);
    await expect(page.locator(SIGNIN.addressInput).getAttribute("autocomplete")).resolves.toBe("username webauthn");
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await page.waitForURL(`${app.url}/account`);
    expect(await sessionEmail(page)).toBe(USER.email);
  });

  it("a press of the button stands when the autofill's options arrive after it", async () => {
    await signOut(page);
    // The page asks for the autofill's options as soon as it runs; a quick press can send the
    // button's ceremony off before they are back. Held here: the autofill's options (the page's
    // first request for them) until the button's ceremony has asked the browser, and that
    // ceremony until the autofill has been called off or has cancelled it by starting late.
    type Probe = { buttonAsked?: boolean; buttonCancelled?: boolean; letButtonGo?: () => void };
    const probe = await page.addInitScript(() => {
      const w = window as unknown as Probe;
      const get = navigator.credentials.get.bind(navigator.credentials);
      const buttonMayGo = new Promise<void>((resolve) => (w.letButtonGo = resolve));
      navigator.credentials.get = async (options?: CredentialRequestOptions) => {
        if (options?.mediation === "conditional") {
          return new Promise((_, reject) => options.signal?.addEventListener("abort", () => reject(new DOMException("ended", "AbortError"))));
        }
        w.buttonAsked = true;
        options?.signal?.addEventListener("abort", () => (w.buttonCancelled = true));
        await buttonMayGo;
        return get(options);
      };
    });
    let releaseAutofillOptions!: () => void;
    const autofillOptionsHeld = new Promise<void>((resolve) => (releaseAutofillOptions = resolve));
    const isOptions = (url: URL) => url.pathname === "/auth/webauthn-options/passkey";
    let optionsRequests = 0;
    let autofillCalledOff = false;
    await page.route(isOptions, async (route) => {
      if (++optionsRequests === 1) await autofillOptionsHeld;
      await route.continue().catch(() => {}); // the page may have called the request off
    });
    const onFailed = (request: { url(): string }) => {
      if (isOptions(new URL(request.url()))) autofillCalledOff = true;
    };
    page.on("requestfailed", onFailed);
    const state = () => page.evaluate(() => ({ ...(window as unknown as Probe) }));
    try {
      await gotoHydrated(page, `${app.url}/auth/signin?callbackUrl=%2Faccount`);
      await page.getByRole("button", { name: "Sign in with a passkey" }).click();
      await page.waitForFunction(() => (window as unknown as Probe).buttonAsked === true);
      releaseAutofillOptions();
      await expect.poll(async () => autofillCalledOff || (await state()).buttonCancelled === true, { timeout: 30_000 }).toBe(true);
      expect((await state()).buttonCancelled ?? false).toBe(false);
      await page.evaluate(() => (window as unknown as Probe).letButtonGo!());
      await page.waitForURL(`${app.url}/account`);
      expect(await sessionEmail(page)).toBe(USER.email);
      expect(optionsRequests).toBe(2);
    } finally {
      releaseAutofillOptions();
      page.off("requestfailed", onFailed);
      await page.unroute(isOptions);
      await probe.dispose();
    }
  });

  it("signs in through next-auth/webauthn's signIn(\"passkey\") unchanged", async () => {
    await signOut(page);
    // A page of the app's origin that carries only next-auth's client bundle.
    await page.route(`${app.url}/next-auth-client`, (route) =>
      route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><html lang="en"><head><title>next-auth client</title></head><body><script>${nextAuthBundle}</script></body></html>`,
      }),
    );
    await page.goto(`${app.url}/next-auth-client`);
    await page.waitForFunction(() => "nextAuthWebauthn" in window);
    await page.evaluate(() => {
      void (window as unknown as { nextAuthWebauthn: { signIn: (p: string, o: object) => Promise<unknown> } }).nextAuthWebauthn.signIn("passkey", {
        callbackUrl: "/account?via=next-auth",
      });
    });
    await page.waitForURL(`${app.url}/account?via=next-auth`);
    expect(await sessionEmail(page)).toBe(USER.email);
    expect(errors).toEqual([]);
  });

  it("adds a passkey through next-auth/webauthn's signIn(\"passkey\", { action: \"register\" }) while signed in", async () => {
    // The authenticator forgets its credential (as after a device reset), so it may register anew.
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    await cdp.send("WebAuthn.removeCredential", { authenticatorId, credentialId: credentials[0]!.credentialId });
    await page.goto(`${app.url}/next-auth-client`);
    await page.waitForFunction(() => "nextAuthWebauthn" in window);
    await page.evaluate(() => {
      void (window as unknown as { nextAuthWebauthn: { signIn: (p: string, o: object) => Promise<unknown> } }).nextAuthWebauthn.signIn("passkey", {
        action: "register",
        callbackUrl: "/account?via=next-auth-register",
      });
    });
    await page.waitForURL(`${app.url}/account?via=next-auth-register`);
    await expect(page.locator("#passkey-list li").count()).resolves.toBe(2);
    expect((await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});

describe("passkeys with JavaScript off", () => {
  it("shows no passkey button, says passkeys need JavaScript, and the password form still signs in", async () => {
    const context = await newContext(browser, { javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
      await expect(page.locator("#passkey-signin").count()).resolves.toBe(0);
      await expect(page.locator(SIGNIN.addressInput).getAttribute("autocomplete")).resolves.toBe("username webauthn");
      await expect(page.locator("[data-passkey-unavailable]").textContent()).resolves.toBe("Signing in with a passkey needs JavaScript.");
      await signInWithPassword(page, USER.email, USER.password);
      await page.waitForURL(`${app.url}/account`);
      await expect(page.locator("#add-passkey").count()).resolves.toBe(0);
      await expect(page.locator("#passkeys [data-passkey-unavailable]").textContent()).resolves.toBe("Adding a passkey needs JavaScript.");
      // Rename and remove are plain forms: they work without JavaScript.
      const rename = page.locator("#passkey-list li").first();
      await rename.getByRole("textbox").fill("Laptop");
      await rename.getByRole("button", { name: "Rename" }).click();
      await page.waitForURL(`${app.url}/account?updated=passkey-renamed#passkeys`);
      await expect(page.locator("#passkey-list [data-passkey-name]").first().textContent()).resolves.toBe("Laptop");
    } finally {
      await context.close();
    }
  });
});
