// Allowing an app needs a recent sign-in (ADR 171), in Chromium against the production server,
// JavaScript off and on: a user whose sign-in is older than AUTH_REAUTH_MAX_AGE who starts an
// authorization is sent to /auth/reauth first, proves who they are with the password, comes back
// to the same consent page (the authorization intact), and Allow takes the browser to the app with
// a code.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ageSessionsOf } from "../support/age-session";
import { addUser, connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { runNpm } from "../support/cli";
import { signInWithPassword } from "../support/signin-form";

const EMAIL = "consent-reauth@example.com";
const PASSWORD = "consent-reauth-password-1";
let app: RunningApp;
let browser: Browser;
let callbacks: Server;
let redirectUri: string;
const codes: string[] = [];

beforeAll(async () => {
  app = await startApp({ AUTH_PROVIDER: "true" });
  addUser(app, { email: EMAIL, password: PASSWORD });
  // The app's loopback redirect URI (RFC 8252): it takes the code and says so.
  callbacks = createServer((req, res) => {
    const code = new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("code");
    if (code) codes.push(code);
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end("<!DOCTYPE html><title>Done</title><p id=done>You can close this window.</p>");
  });
  await new Promise<void>((resolve) => callbacks.listen(0, "127.0.0.1", resolve));
  redirectUri = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback`;
  browser = await connectBrowser();
});

afterAll(async () => {
  await browser?.close();
  callbacks?.closeAllConnections();
  await new Promise((resolve) => callbacks?.close(resolve));
  await app?.stop();
});

/** A public app added the operator's way; its client id. */
async function addApp(name: string): Promise<string> {
  const env = { VESTIBULE_DATA_DIR: app.dataDir, AUTH_SECRET: app.env.AUTH_SECRET, AUTH_URL: app.env.AUTH_URL, AUTH_PROVIDER: "true" };
  const result = await runNpm("oauth:client:add", ["--name", name, "--redirect-uri", "http://127.0.0.1/callback", "--public"], env);
  const clientId = /client_id: (\S+)/.exec(result.stdout)?.[1];
  if (!clientId) throw new Error(`oauth:client:add: ${result.stdout} ${result.stderr}`);
  return clientId;
}

for (const javaScriptEnabled of [false, true]) {
  it(`an old session is asked to sign in again before Allow, and comes back to the same authorization (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async () => {
    const clientId = await addApp(`Notes ${javaScriptEnabled ? "JS" : "no JS"}`);
    const context = await newContext(browser, { javaScriptEnabled });
    try {
      const page = await context.newPage();
      await page.goto(`${app.url}/auth/signin`);
      await signInWithPassword(page, EMAIL, PASSWORD);
      await page.waitForURL(`${app.url}/`);
      // Eleven minutes pass (the sessions' sign-in is moved back; no waiting).
      expect(await ageSessionsOf(app, EMAIL, 11)).toBeGreaterThan(0);

      const authorize = new URL(`${app.url}/oauth/authorize`);
      const params = {
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "openid email",
        state: "s-123",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
      };
      for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
      await page.goto(authorize.href);
      await page.waitForURL((url) => url.pathname === "/auth/reauth");
      const back = new URL(page.url()).searchParams.get("callbackUrl")!;
      expect(back).toMatch(/^\/oauth\/consent\/[\w-]+$/);

      await page.locator("#reauth-password").fill(PASSWORD);
      await page.locator("#reauth-password-form [type=submit]").click();
      await page.waitForURL(`${app.url}${back}`);
      await page.locator("#consent-allow").click();
      await page.locator("#done").waitFor();
      const landed = new URL(page.url());
      expect(`${landed.origin}${landed.pathname}`).toBe(redirectUri);
      expect(landed.searchParams.get("state")).toBe("s-123");
      expect(landed.searchParams.get("code")).toEqual(expect.any(String));
    } finally {
      await context.close();
    }
  });
}
