// On the production server (server/main.ts over the build): every page carries a
// Content-Security-Policy whose script nonce is new per response and on every <script> the page
// has; pages, JSON answers, probes and assets carry the base headers; Chromium, enforcing the
// policy with JavaScript on, reports no violation on the sign-in page, through a password sign-in
// and on /account (the OAuth flows under the same policy are tests/browser/oauth.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { connectBrowser, newContext, startApp, waitForHydration, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { startTestIdp, TEST_CLIENT, type TestIdp } from "../support/idp";
import { signInWithPassword } from "../support/signin-form";

let app: RunningApp;
let idp: TestIdp;
let browser: Browser;
const USER = { email: "csp@example.com", password: "correct horse battery staple", name: "Cee Ess" };

beforeAll(async () => {
  idp = await startTestIdp();
  app = await startApp({
    AUTH_OIDC_ISSUER: idp.issuer,
    AUTH_OIDC_ID: TEST_CLIENT.clientId,
    AUTH_OIDC_SECRET: TEST_CLIENT.clientSecret,
    AUTH_OIDC_NAME: "Test IdP",
  });
  await seedUser(app, USER);
  browser = await connectBrowser();
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await idp?.stop();
});

const BASE = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
};

function expectBase(res: Response, label: string) {
  for (const [name, value] of Object.entries(BASE)) expect(res.headers.get(name), `${label}: ${name}`).toBe(value);
  // AUTH_URL is http here.
  expect(res.headers.get("strict-transport-security"), label).toBeNull();
}

function nonceOf(csp: string): string {
  const match = /script-src 'self' 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp);
  if (!match) throw new Error(`no script nonce in ${csp}`);
  return match[1]!;
}

describe("headers on the production server", () => {
  it("pages: the policy, a new nonce per response, on every <script> of the page", async () => {
    const seen = new Set<string>();
    for (const path of ["/auth/signin", "/auth/signin", "/", "/auth/error?error=Configuration", "/no-such-page"]) {
      const res = await fetch(`${app.url}${path}`);
      expectBase(res, path);
      const csp = res.headers.get("content-security-policy")!;
      expect(csp, path).toMatch(/^script-src 'self' 'nonce-[^']+'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self' /);
      expect(csp).not.toContain("unsafe-inline");
      expect(csp.split("; ").find((d) => d.startsWith("form-action"))).toBe(`form-action 'self' ${new URL(idp.issuer).origin}`);
      const nonce = nonceOf(csp);
      expect(seen.has(nonce), `${path}: nonce reused`).toBe(false);
      seen.add(nonce);
      const html = await res.text();
      const scripts = html.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length, path).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag, path).toContain(` nonce="${nonce}"`);
    }
  });

  it("JSON endpoints, the probes, static assets and refusals carry the base headers", async () => {
    const html = await (await fetch(`${app.url}/auth/signin`)).text();
    const asset = /(?:src|href)="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    for (const path of ["/auth/session", "/auth/providers", "/auth/csrf", "/healthz", asset]) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status, path).toBe(200);
      expectBase(res, path);
      expect(res.headers.get("content-security-policy"), path).toBeNull();
    }
    const refused = await fetch(`${app.url}/auth/_log`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: "https://evil.example" },
      body: "{}",
    });
    expect(refused.status).toBe(403);
    expectBase(refused, "refused _log");
  });

  it("a page POST from another site is 403 (React Router's own 400 gives way to the app's rule)", async () => {
    const res = await fetch(`${app.url}/account`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: "https://evil.example" },
      body: "intent=profile",
      redirect: "manual",
    });
    expect(res.status).toBe(403);
  });
});

describe("Chromium with the policy on (JavaScript on)", () => {
  it("no violation on the sign-in page, through a password sign-in and on /account", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    page.on("pageerror", (e) => violations.push(`pageerror: ${e.message}`));
    // A report of every violation the page sees, including ones the console does not show.
    await context.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) => console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`));
    });
    const hydrated = () => waitForHydration(page);

    await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);
    await hydrated();
    // Both steps of the form, the second swapped in place by the page's own script.
    await signInWithPassword(page, USER.email, USER.password);
    await page.waitForURL((url) => url.pathname === "/account");
    await hydrated();
    await expect(page.locator("h1").textContent()).resolves.toBe("Your account");
    // A client-side navigation (a .data request) and back, still under the first page's policy.
    await page.getByRole("link", { name: "Vestibule" }).click();
    await page.waitForURL((url) => url.pathname === "/");
    await page.goto(`${app.url}/account`);
    await hydrated();
    expect(violations).toEqual([]);
    await context.close();
  });
});
