// Vestibule as deploy/ runs it (contract §19, docs/decisions/066): Debian's nginx with
// deploy/nginx/vestibule.conf in front of two `npm start` instances on one PostgreSQL database,
// TLS with a certificate from a CA made at test time and trusted by Chromium (an NSS database in
// the browser's HOME), every sign-in method through https:// with JavaScript off and on.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect as tlsConnect } from "node:tls";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_PATH } from "../support/chromium";
import { deployToolsMissing, httpsRequest, trustCaForChromium } from "../support/deploy";
import { ALICE } from "../support/idp";
import { postgresUnreachable } from "../support/postgres-required";
import { isSecurityNotice, linkIn, waitForMessages, type ReceivedMessage } from "../support/smtp-sink";
import { addUserTo, startStack, type Stack } from "./stack";
import { requestEmailSignIn, signInWithPassword } from "../support/signin-form";

const unavailable = deployToolsMissing("deploy tests") ?? (await postgresUnreachable("deploy tests"));

describe.skipIf(unavailable !== null)("behind nginx with TLS, two instances", () => {
  let stack: Stack;
  let browser: Browser;
  let home: string;

  beforeAll(async () => {
    stack = await startStack("nginx");
    home = mkdtempSync(path.join(os.tmpdir(), "vestibule-chromium-home-"));
    trustCaForChromium(home, stack.certs.caPath);
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      // No flag that ignores certificate errors: the CA in $HOME/.pki/nssdb is what Chromium trusts.
      env: { ...process.env, HOME: home },
      // The browser reaches nginx over IPv6 loopback (::1) while nginx reaches the instances
      // from 127.0.0.1, so the browser's address and nginx's differ in /account.
      args: ["--host-resolver-rules=MAP localhost [::1]", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  async function newPage(javaScriptEnabled: boolean, extraHTTPHeaders?: Record<string, string>): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ javaScriptEnabled, extraHTTPHeaders });
    context.setDefaultTimeout(10_000);
    return { context, page: await context.newPage() };
  }

  async function hydrated(page: Page) {
    await page.waitForFunction(() => (window as unknown as { __reactRouterRouteModules?: unknown }).__reactRouterRouteModules !== undefined);
  }

  /** Every cookie the site set is Secure and carries the __Secure- or __Host- prefix. */
  async function expectPrefixedCookies(context: BrowserContext) {
    const cookies = await context.cookies(stack.origin);
    expect(cookies.length).toBeGreaterThan(0);
    for (const c of cookies) {
      expect(c.name, c.name).toMatch(/^__(Secure|Host)-/);
      expect(c.secure, c.name).toBe(true);
      if (c.name.startsWith("__Host-")) expect(c.path, c.name).toBe("/");
    }
    expect(cookies.map((c) => c.name)).toContain("__Secure-authjs.session-token");
  }

  /** The address /account's activity shows for the latest sign-in. */
  async function signInAddress(page: Page): Promise<string> {
    await page.goto(`${stack.origin}/account`);
    return (await page.locator('#activity tr[data-event="signin"] td').nth(3).first().textContent())!.trim();
  }

  it("answers TLS 1.2 and 1.3 with HTTP/2 offered, with the certificate the test CA signed; refuses TLS 1.1", async () => {
    for (const version of ["TLSv1.2", "TLSv1.3"] as const) {
      const socket = tlsConnect({ host: "127.0.0.1", servername: "localhost", port: stack.httpsPort, ca: stack.certs.ca, minVersion: version, maxVersion: version, ALPNProtocols: ["h2", "http/1.1"] });
      await new Promise<void>((resolve, reject) => {
        socket.once("secureConnect", resolve);
        socket.once("error", reject);
      });
      expect(socket.authorized).toBe(true);
      expect(socket.getProtocol()).toBe(version);
      expect(socket.alpnProtocol).toBe("h2");
      socket.destroy();
    }
    const old = tlsConnect({ host: "127.0.0.1", servername: "localhost", port: stack.httpsPort, ca: stack.certs.ca, minVersion: "TLSv1", maxVersion: "TLSv1.1" });
    await expect(new Promise((resolve, reject) => (old.once("secureConnect", resolve), old.once("error", reject)))).rejects.toThrow();
    old.destroy();
  });

  it("Chromium trusts the certificate only through the CA in its NSS database: without it the page is refused", async () => {
    const emptyHome = mkdtempSync(path.join(os.tmpdir(), "vestibule-chromium-untrusting-"));
    const untrusting = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      env: { ...process.env, HOME: emptyHome },
      args: ["--host-resolver-rules=MAP localhost [::1]", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic"],
    });
    try {
      const page = await untrusting.newPage();
      await expect(page.goto(`${stack.origin}/auth/signin`)).rejects.toThrow(/ERR_CERT_AUTHORITY_INVALID/);
    } finally {
      await untrusting.close();
      rmSync(emptyHome, { recursive: true, force: true });
    }
  });

  for (const javaScriptEnabled of [false, true]) {
    const js = javaScriptEnabled ? "on" : "off";

    it(`password sign-in in Chromium over https (JavaScript ${js}): prefixed Secure cookies, HTTP/2, /account shows the browser's address`, async () => {
      const email = `deploy-password-${js}@example.com`;
      await addUserTo(stack, { email, password: "correct horse battery", name: "Ada" });
      const { context, page } = await newPage(javaScriptEnabled);
      const first = await page.goto(`${stack.origin}/auth/signin`);
      expect(first!.status()).toBe(200);
      expect((await first!.securityDetails())?.protocol).toMatch(/^TLS 1\.[23]$/);
      await signInWithPassword(page, email, "correct horse battery");
      await page.waitForURL((url) => url.origin === stack.origin && !url.pathname.startsWith("/auth/"));
      await expectPrefixedCookies(context);
      await page.goto(`${stack.origin}/account`);
      await expect(page.locator("#profile-email").textContent()).resolves.toContain(email);
      if (javaScriptEnabled) {
        expect(await page.evaluate(() => (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).nextHopProtocol)).toBe("h2");
      }
      // The browser's address (::1, as nginx's own log has it), not nginx's (127.0.0.1).
      const shown = await signInAddress(page);
      const seen = /^(\S+) - .*"POST \/auth\/callback\/credentials/m.exec(stack.nginx.accessLog());
      expect(seen, "nginx logged the sign-in").not.toBeNull();
      expect(seen![1]).toBe("::1");
      expect(shown).toBe("::1");
      await context.close();
    }, 60_000);

    it(`e-mail link and e-mail code sign-in in Chromium over https (JavaScript ${js})`, async () => {
      for (const way of ["link", "code"] as const) {
        const email = `deploy-${way}-${js}@example.com`;
        const { context, page } = await newPage(javaScriptEnabled);
        await page.goto(`${stack.origin}/auth/signin`);
        // Not counting the security e-mails of earlier sign-ins from new browsers (ADR 081).
        const before = stack.sink.messages.filter((m) => !isSecurityNotice(m)).length;
        await requestEmailSignIn(page, email);
        await page.waitForURL(/\/auth\/verify-request\?provider=email&type=email$/);
        const message: ReceivedMessage = (await waitForMessages(stack.sink, before + 1))[before]!;
        expect(message.envelope.to).toEqual([email]);
        if (way === "link") {
          const link = linkIn(message);
          expect(link.origin).toBe(stack.origin);
          await page.goto(link.toString());
        } else {
          const code = /code in the browser where you asked: (\d{6})/.exec(message.text ?? "")![1]!;
          await page.locator("#email-code-input").fill(code);
          await page.getByRole("button", { name: "Continue" }).click();
        }
        await page.waitForURL((url) => url.origin === stack.origin && !url.pathname.startsWith("/auth/"));
        await expectPrefixedCookies(context);
        const session = await (await page.goto(`${stack.origin}/auth/session`))!.json();
        expect(session.user.email).toBe(email);
        await context.close();
      }
    }, 60_000);

    it(`OAuth sign-in with the test IdP in Chromium over https (JavaScript ${js})`, async () => {
      const { context, page } = await newPage(javaScriptEnabled);
      await page.goto(`${stack.origin}/auth/signin`);
      await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
      await page.waitForURL((url) => url.origin === stack.idp.issuer);
      await page.locator("#idp-email").fill(ALICE.email);
      await page.locator("#idp-password").fill(ALICE.password);
      await page.locator("#idp-submit").click();
      await page.waitForURL((url) => url.origin === stack.origin && !url.pathname.startsWith("/auth/"));
      await expectPrefixedCookies(context);
      const session = await (await page.goto(`${stack.origin}/auth/session`))!.json();
      expect(session.user.email).toBe(ALICE.email);
      await context.close();
    }, 60_000);
  }

  it("passkey registration and sign-in with Chromium's virtual authenticator over https (JavaScript on)", async () => {
    const email = "deploy-passkey@example.com";
    await addUserTo(stack, { email, password: "correct horse battery" });
    const { context, page } = await newPage(true);
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await page.goto(`${stack.origin}/auth/signin?callbackUrl=%2Faccount`);
    await hydrated(page);
    await signInWithPassword(page, email, "correct horse battery");
    await page.waitForURL(`${stack.origin}/account`);
    await hydrated(page);
    await page.getByRole("button", { name: "Add a passkey for next time" }).click();
    await page.waitForURL(`${stack.origin}/account?updated=passkey-added`);
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.rpId).toBe("localhost");
    // Signed out, the sign-in page's conditional request is answered by the authenticator.
    await page.goto(`${stack.origin}/auth/signout`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL((url) => url.origin === stack.origin && url.pathname === "/");
    await page.goto(`${stack.origin}/auth/signin?callbackUrl=%2Faccount`);
    await page.waitForURL(`${stack.origin}/account`);
    await expect(page.locator("#sessions li[data-current]").textContent()).resolves.toContain("Signed in with a passkey");
    await expectPrefixedCookies(context);
    await context.close();
  }, 90_000);

  it("an X-Forwarded-For the browser sends is not believed: /account shows the address nginx saw", async () => {
    const email = "deploy-spoof@example.com";
    await addUserTo(stack, { email, password: "correct horse battery" });
    const { context, page } = await newPage(false, { "X-Forwarded-For": "203.0.113.7", "X-Real-IP": "203.0.113.8" });
    await page.goto(`${stack.origin}/auth/signin`);
    await signInWithPassword(page, email, "correct horse battery");
    await page.waitForURL((url) => url.origin === stack.origin && !url.pathname.startsWith("/auth/"));
    const shown = await signInAddress(page);
    expect(shown).not.toContain("203.0.113");
    expect(shown).toBe("::1");
    await context.close();
  }, 60_000);

  it("a body over 64 KiB is refused with 413, by nginx or by the instance, never 502 — declared or chunked", async () => {
    const big = `csrfToken=x&email=a%40example.com&password=${"p".repeat(70 * 1024)}`;
    const declared = await httpsRequest(`${stack.origin}/auth/callback/credentials`, {
      ca: stack.certs.ca,
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": String(Buffer.byteLength(big)) },
      body: big,
    });
    expect(declared.status).toBe(413);
    const chunked = await httpsRequest(`${stack.origin}/auth/callback/credentials`, {
      ca: stack.certs.ca,
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "Transfer-Encoding": "chunked" },
      body: big,
    });
    expect(chunked.status).toBe(413);
    // Exactly at the limit it reaches the app, which answers as for any bad form.
    const prefix = "csrfToken=x&email=a%40example.com&password=";
    const atLimit = `${prefix}${"p".repeat(64 * 1024 - prefix.length)}`;
    expect(Buffer.byteLength(atLimit)).toBe(64 * 1024);
    const fits = await httpsRequest(`${stack.origin}/auth/callback/credentials`, {
      ca: stack.certs.ca,
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: atLimit,
    });
    expect(fits.status).not.toBe(413);
    expect(fits.status).toBeLessThan(500);
  });

  it("plain http on nginx's other port only redirects to https", async () => {
    const res = await fetch(`http://127.0.0.1:${stack.httpPort}/account?x=1`, { redirect: "manual" });
    expect(res.status).toBe(301);
    expect(res.headers.get("Location")).toBe("https://127.0.0.1/account?x=1");
    expect(stack.nginx.errorLog()).not.toMatch(/\[(emerg|alert|crit)\]/);
  });
});
