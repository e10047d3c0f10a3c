// OAuth against the production build (server/main.ts) and the bundled IdP module:
//   - HTTP level: a provider's response_mode=form_post answer is a cross-site POST (Origin: the
//     IdP); the Origin rule must not reject it on /auth/callback/<id>, while the same foreign POST
//     to a page route is still refused (the control). Every page runs under its CSP (ADR 037).
//   - Chromium with JavaScript off and on: "Sign in with Test IdP", the IdP's login page, back to
//     /welcome with a session; and a real cross-site form_post sign-in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { connectBrowser, gotoHydrated, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { CookieJar } from "../support/http";
import { ALICE, BOB, startTestIdp, TEST_CLIENT, visitIdp, type TestIdp } from "../support/idp";

const CAROL = { sub: "idp-carol", email: "carol@example.com", emailVerified: true, name: "Carol Browser", password: "carol-password" };
const DAVE = { sub: "idp-dave", email: "dave@example.com", emailVerified: true, name: "Dave Browser", password: "dave-password" };
const ERIN = { sub: "idp-erin", email: "erin@example.com", emailVerified: true, name: "Erin Browser", password: "erin-password" };

let browser: Browser;
let idp: TestIdp;
let app: RunningApp;

beforeAll(async () => {
  idp = await startTestIdp({ users: [ALICE, BOB, CAROL, DAVE, ERIN] });
  app = await startApp({
    AUTH_OIDC_ISSUER: idp.issuer,
    AUTH_OIDC_ID: TEST_CLIENT.clientId,
    AUTH_OIDC_SECRET: TEST_CLIENT.clientSecret,
    AUTH_OIDC_NAME: "Test IdP",
  });
  browser = await connectBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await idp?.stop();
});

/** fetch() against the running app with a cookie jar, redirects not followed. */
async function appFetch(jar: CookieJar, path: string, init: RequestInit & { form?: Record<string, string> } = {}) {
  const headers = new Headers(init.headers);
  headers.set("Cookie", jar.header());
  let body = init.body;
  if (init.form) {
    headers.set("Content-Type", "application/x-www-form-urlencoded");
    body = new URLSearchParams(init.form);
  }
  const res = await fetch(new URL(path, app.url), { ...init, headers, body, redirect: "manual" });
  jar.apply(res);
  return res;
}

describe("OAuth on the production server", () => {
  it("accepts the IdP's cross-site form_post to /auth/callback/oidc (React Router's origin check does not apply)", async () => {
    const jar = new CookieJar();
    const { csrfToken } = (await (await appFetch(jar, "/auth/csrf")).json()) as { csrfToken: string };
    const start = await appFetch(jar, "/auth/signin/oidc?response_mode=form_post", {
      method: "POST",
      form: { csrfToken, callbackUrl: "/fp" },
    });
    expect(start.status).toBe(302);
    const answer = await visitIdp(start.headers.get("Location")!, ALICE);
    if (answer.kind !== "form_post") throw new Error(`expected a form_post page, got ${answer.kind}`);
    expect(new URL(answer.action).href).toBe(`${app.url}/auth/callback/oidc`);

    // What Chromium sends when the IdP's page auto-submits: the IdP's origin, cross-site.
    const res = await appFetch(jar, "/auth/callback/oidc", {
      method: "POST",
      headers: { Origin: idp.issuer, "Sec-Fetch-Site": "cross-site" },
      form: answer.fields,
    });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe(`${app.url}/welcome?callbackUrl=%2Ffp`);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("authjs.session-token=") && !c.includes("Max-Age=0"))).toBe(true);
    const session = (await (await appFetch(jar, "/auth/session")).json()) as { user: { email: string } };
    expect(session.user.email).toBe(ALICE.email);
  });

  it("control: the same foreign Origin on a page route's action is refused (MissingCSRF, docs/decisions/037)", async () => {
    const jar = new CookieJar();
    const { csrfToken } = (await (await appFetch(jar, "/auth/csrf")).json()) as { csrfToken: string };
    const res = await appFetch(jar, "/auth/signin", { method: "POST", headers: { Origin: idp.issuer }, form: { csrfToken } });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("Location")!).searchParams.get("error")).toBe("MissingCSRF");
    // And with its own origin the same POST goes through.
    const ok = await appFetch(jar, "/auth/signin", { method: "POST", headers: { Origin: app.url }, form: { csrfToken } });
    expect(ok.status).toBe(302);
  });

  it("a Cancel at the provider arrives as the sign-in page saying so, and no stack trace", async () => {
    const jar = new CookieJar();
    const { csrfToken } = (await (await appFetch(jar, "/auth/csrf")).json()) as { csrfToken: string };
    const start = await appFetch(jar, "/auth/signin/oidc", { method: "POST", form: { csrfToken } });
    const answer = await visitIdp(start.headers.get("Location")!, "cancel");
    if (answer.kind !== "redirect") throw new Error("expected a redirect");
    const res = await appFetch(jar, new URL(answer.url).pathname + new URL(answer.url).search);
    expect(res.headers.get("Location")).toBe(`${app.url}/auth/signin?error=OAuthCancelled&provider=oidc`);
    const page = await appFetch(jar, "/auth/signin?error=OAuthCancelled&provider=oidc");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("You cancelled signing in with Test IdP. Choose another way or try again.");
    // A stack frame names a file and a line ("at fn (/app/x.js:10:5)"); a sentence such as "that one (" is not one.
    expect(html).not.toMatch(/\bat [\w.<>]+ \([^)]*:\d+:\d+\)|node_modules|Error:/);
  });
});

async function signInAtIdp(page: Page, user: { email: string; password: string }) {
  await page.waitForURL((url) => url.origin === idp.issuer);
  await expect(page.locator("h1").textContent()).resolves.toBe("Sign in to the dev IdP");
  await page.locator("#idp-email").fill(user.email);
  await page.locator("#idp-password").fill(user.password);
  await page.locator("#idp-submit").click();
}

for (const javaScriptEnabled of [false, true]) {
  describe(`OAuth in Chromium with JavaScript ${javaScriptEnabled ? "on" : "off"}`, () => {
    it("signs in through the IdP, lands on /welcome, then signs in again straight to the callback URL", async () => {
      const context = await newContext(browser, { javaScriptEnabled });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      const user = javaScriptEnabled ? CAROL : DAVE;

      await page.goto(`${app.url}/account`);
      expect(new URL(page.url()).pathname).toBe("/auth/signin");
      if (javaScriptEnabled) await waitForHydration(page);
      await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
      await signInAtIdp(page, user);

      // A new user: the welcome page, carrying the page first asked for.
      await page.waitForURL((url) => url.origin === app.url && url.pathname === "/welcome");
      expect(new URL(page.url()).searchParams.get("callbackUrl")).toBe("/account");
      const session = await (await page.request.get(`${app.url}/auth/session`)).json();
      expect(session.user).toMatchObject({ email: user.email, name: user.name });

      // Signed out and back in: the IdP remembers the browser, no login page, straight to /account.
      await page.goto(`${app.url}/auth/signout`);
      await page.getByRole("button", { name: /sign out/i }).click();
      await page.waitForURL((url) => url.origin === app.url && url.pathname !== "/auth/signout");
      expect(await (await page.request.get(`${app.url}/auth/session`)).json()).toBeNull();
      await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
      await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
      await page.waitForURL((url) => url.origin === app.url && url.pathname === "/account");
      await expect(page.locator("h1").textContent()).resolves.toBe("Your account");
      await expect(page.locator("#linked-accounts").textContent()).resolves.toContain("Test IdP");
      expect(errors).toEqual([]);
      await context.close();
    });

    it("a visitor who presses Cancel at the IdP is told on the sign-in page they cancelled, with the other ways to sign in", async () => {
      const context = await newContext(browser, { javaScriptEnabled });
      const page = await context.newPage();
      await page.goto(`${app.url}/auth/signin`);
      if (javaScriptEnabled) await waitForHydration(page);
      await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
      await page.waitForURL((url) => url.origin === idp.issuer);
      await page.locator("#idp-cancel").click();
      await page.waitForURL((url) => url.origin === app.url && url.pathname === "/auth/signin");
      expect(new URL(page.url()).searchParams.get("error")).toBe("OAuthCancelled");
      await expect(page.getByRole("alert").textContent()).resolves.toBe("You cancelled signing in with Test IdP. Choose another way or try again.");
      await expect(page.getByRole("button", { name: "Sign in with Test IdP" }).count()).resolves.toBe(1);
      await context.close();
    });
  });
}

describe("OAuth form_post in Chromium (JavaScript on)", () => {
  it("the IdP's auto-submitted cross-site POST carries the SameSite=None check cookies and signs in", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await gotoHydrated(page, `${app.url}/auth/signin?callbackUrl=%2Faccount`);
    // The client's own authorization parameter, as signIn("oidc", {}, {response_mode: "form_post"}) sends it.
    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('form[action="/auth/signin/oidc"]')!;
      form.setAttribute("action", "/auth/signin/oidc?response_mode=form_post");
    });
    await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
    // Alice already has an account here (the HTTP test): a returning user goes to the callback URL.
    const checks = (await context.cookies(app.url)).filter((c) => /^authjs\.(state|nonce|pkce)/.test(c.name));
    expect(checks.map((c) => [c.name, c.sameSite, c.secure])).toEqual([
      ["authjs.state", "None", true],
      ["authjs.pkce.code_verifier", "None", true],
      ["authjs.nonce", "None", true],
    ]);
    await signInAtIdp(page, ALICE);
    // The IdP (127.0.0.1) posts to the app (localhost): cross-site. The flow's callback URL
    // travels in the sealed state cookie, since the Lax callback-url cookie is not sent.
    await page.waitForURL((url) => url.origin === app.url && url.pathname === "/account");
    const session = await (await page.request.get(`${app.url}/auth/session`)).json();
    expect(session.user.email).toBe(ALICE.email);
    await context.close();
  });
});

describe("OAuth check cookies in Chromium", () => {
  it("five sign-ins started with 2,048-character callback URLs: the newest completes and lands on its own URL", async () => {
    const context = await newContext(browser, { javaScriptEnabled: false });
    const page = await context.newPage();
    const longUrl = (i: number) => {
      const head = `${app.url}/account?tab=${i}&pad=`;
      return head + "x".repeat(2048 - head.length);
    };
    for (let i = 0; i < 5; i++) {
      await page.goto(`${app.url}/auth/signin?callbackUrl=${encodeURIComponent(longUrl(i))}`);
      await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
      await page.waitForURL((url) => url.origin === idp.issuer);
    }
    // Chromium kept every check cookie the app set (it drops any cookie over 4096 bytes).
    const checks = (await context.cookies(app.url)).filter((c) => /^authjs\.(state|pkce|nonce)/.test(c.name));
    expect(checks.map((c) => c.name).sort()).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);

    await signInAtIdp(page, ERIN);
    await page.waitForURL((url) => url.origin === app.url);
    const landed = new URL(page.url());
    expect(landed.pathname + (landed.searchParams.get("error") ?? "")).toBe("/welcome");
    expect(`${app.url}${landed.searchParams.get("callbackUrl")}`).toBe(longUrl(4));
    const session = await (await page.request.get(`${app.url}/auth/session`)).json();
    expect(session.user.email).toBe(ERIN.email);
    await context.close();
  });
});
