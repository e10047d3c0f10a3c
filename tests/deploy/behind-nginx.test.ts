// Vestibule as deploy/ runs it (docs/decisions/066): Debian's nginx with
// deploy/nginx/vestibule.conf in front of two `npm start` instances on one PostgreSQL database,
// TLS with a certificate from a CA made at test time and trusted by Chromium (an NSS database in
// the browser's HOME), every sign-in method through https:// with JavaScript off and on.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect as tlsConnect } from "node:tls";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_PATH } from "../support/chromium";
import { DEPLOY_DIR, deployToolsMissing, httpsRequest, renewCertificate, servedSerial, trustCaForChromium, type HttpsAnswer } from "../support/deploy";
import { openSocket, readAll } from "../support/raw-http";
import { waitUntil } from "../support/wait";
import { ALICE } from "../support/idp";
import { postgresUnreachable } from "../support/postgres-required";
import { isSecurityNotice, linkIn, waitForMessages, type ReceivedMessage } from "../support/smtp-sink";
import { addUserTo, startStack, type Stack } from "./stack";
import { requestEmailSignIn, signInWithPassword } from "../support/signin-form";

const unavailable = deployToolsMissing("deploy tests") ?? (await postgresUnreachable("deploy tests"));
const METRICS_TOKEN = "deploy-test-metrics-token-0123456789abcdef";

describe.skipIf(unavailable !== null)("behind nginx with TLS, two instances", () => {
  let stack: Stack;
  let browser: Browser;
  let home: string;

  beforeAll(async () => {
    stack = await startStack("nginx", { METRICS_TOKEN });
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
    // The answer lands at the passkeys section (#passkeys, ADR 114).
    await page.waitForURL((url) => url.origin === stack.origin && url.pathname === "/account" && url.searchParams.get("updated") === "passkey-added");
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
    const res = await fetch(`http://localhost:${stack.httpPort}/account?x=1`, { redirect: "manual" });
    expect(res.status).toBe(301);
    // To the configured name (the https port is 443 in production, so none is written).
    expect(res.headers.get("Location")).toBe("https://localhost/account?x=1");
    expect(stack.nginx.errorLog()).not.toMatch(/\[(emerg|alert|crit)\]/);
  });

  // ---- issue 31: what nginx logs, which hosts it serves, renewals, probes (ADR 105) -------------

  /** A form POST through nginx with the CSRF token and cookie of a fresh GET /auth/csrf. */
  async function postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<HttpsAnswer> {
    const csrf = await httpsRequest(`${stack.origin}/auth/csrf`, { ca: stack.certs.ca });
    const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
    return httpsRequest(`${stack.origin}${path}`, {
      ca: stack.certs.ca,
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: csrf.setCookies.map((c) => c.split(";")[0]).join("; "), ...headers },
      body: new URLSearchParams({ csrfToken, ...fields }).toString(),
    });
  }

  /** The first message to `email` whose link goes to `pathname`, once it has arrived. */
  function messageTo(email: string, pathname: string): Promise<ReceivedMessage> {
    const find = () => stack.sink.messages.find((m) => m.envelope.to[0] === email && !isSecurityNotice(m) && linkIn(m).pathname === pathname);
    return waitUntil(find, (m) => m !== undefined) as Promise<ReceivedMessage>;
  }

  it("an operator reading nginx's access and error logs finds no sign-in token, reset token or address", async () => {
    const email = "deploy-logs@example.com";
    await addUserTo(stack, { email, password: "correct horse battery" });
    // A sign-in link, asked for and opened through nginx.
    expect((await postForm("/auth/signin/email", { email })).status).toBe(302);
    const signin = linkIn(await messageTo(email, "/auth/callback/email"));
    expect((await httpsRequest(signin.toString(), { ca: stack.certs.ca })).status).toBeLessThan(400);
    // A reset link, asked for and opened through nginx.
    expect((await postForm("/auth/forgot-password", { email })).status).toBe(302);
    const reset = linkIn(await messageTo(email, "/auth/reset-password"));
    expect((await httpsRequest(reset.toString(), { ca: stack.certs.ca })).status).toBe(200);
    // An address in a query string.
    await httpsRequest(`${stack.origin}/auth/signin?email=${encodeURIComponent(email)}`, { ca: stack.certs.ca });
    // A request nginx itself refuses (413) is an error-level line with the request line and the
    // Referer in it.
    const big = `password=${"p".repeat(70 * 1024)}`;
    const refused = await httpsRequest(`${reset.origin}${reset.pathname}${reset.search}`, {
      ca: stack.certs.ca,
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": String(big.length), Referer: reset.toString() },
      body: big,
    });
    expect(refused.status).toBe(413);
    // nginx writes its access line once the request is over, which may be after the answer.
    await waitUntil(() => stack.nginx.accessLog(), (log) => /"POST \/auth\/reset-password HTTP\/1\.1" 413 /.test(log));

    const secrets = [signin.searchParams.get("token")!, reset.searchParams.get("token")!, email, encodeURIComponent(email), "deploy-logs%40", "deploy-logs@"];
    expect(secrets[0]).toMatch(/^[0-9a-f]{64}$/);
    const access = stack.nginx.accessLog();
    const errors = stack.nginx.errorLog();
    for (const secret of secrets) {
      expect(access, `access log holds ${secret}`).not.toContain(secret);
      expect(errors, `error log holds ${secret}`).not.toContain(secret);
    }
    // The requests are there, by their paths.
    expect(access).toContain('"GET /auth/callback/email HTTP/1.1"');
    expect(access).toContain('"GET /auth/reset-password HTTP/1.1"');
  }, 60_000);

  it("certbot's http-01 challenge file in /var/www/letsencrypt is served over plain http; every other http path still redirects", async () => {
    const token = `deploy-${Date.now().toString(36)}-challenge`;
    mkdirSync(path.join(stack.webroot, ".well-known/acme-challenge"), { recursive: true });
    writeFileSync(path.join(stack.webroot, ".well-known/acme-challenge", token), `${token}.key-authorization`);
    const served = await fetch(`http://localhost:${stack.httpPort}/.well-known/acme-challenge/${token}`, { redirect: "manual" });
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(`${token}.key-authorization`);
    const missing = await fetch(`http://localhost:${stack.httpPort}/.well-known/acme-challenge/not-there`, { redirect: "manual" });
    expect(missing.status).toBe(404);
    for (const other of ["/.well-known/other", "/", "/auth/signin", `/x/.well-known/acme-challenge/${token}`]) {
      const res = await fetch(`http://localhost:${stack.httpPort}${other}`, { redirect: "manual" });
      expect(res.status, other).toBe(301);
      expect(res.headers.get("Location"), other).toBe(`https://localhost${other}`);
    }
  });

  it("the shipped certbot deploy hook makes nginx serve the renewed certificate", async () => {
    const before = await servedSerial(stack.httpsPort, stack.certs.ca);
    const renewed = renewCertificate(stack.certs);
    expect(renewed).not.toBe(before);
    // nginx keeps the certificate it loaded until it is told.
    expect(await servedSerial(stack.httpsPort, stack.certs.ca)).toBe(before);
    // The hook as certbot runs it (an executable in renewal-hooks/deploy), with the test's nginx
    // as the `nginx` on its PATH.
    execFileSync(path.join(DEPLOY_DIR, "certbot/deploy-hook.sh"), [], {
      env: { ...process.env, PATH: `${stack.nginx.binDir}:${process.env.PATH}`, RENEWED_LINEAGE: path.dirname(stack.certs.certPath), RENEWED_DOMAINS: "localhost" },
      stdio: "pipe",
    });
    await waitUntil(() => servedSerial(stack.httpsPort, stack.certs.ca), (serial) => serial === renewed);
    // And the site still answers over it.
    expect((await httpsRequest(`${stack.origin}/auth/csrf`, { ca: stack.certs.ca })).status).toBe(200);
  });

  it("a visitor asking nginx for /metrics, /readyz or /healthz gets 404; each instance answers them on its own port", async () => {
    const bearer = { Authorization: `Bearer ${METRICS_TOKEN}` };
    for (const target of ["/metrics", "/readyz", "/healthz", "/readyz?x=1", "//metrics", "/%6detrics"]) {
      const res = await httpsRequest(`${stack.origin}${target}`, { ca: stack.certs.ca, headers: bearer });
      expect(res.status, target).toBe(404);
      expect(res.body, target).not.toMatch(/vestibule_|"status"/);
    }
    for (const instance of [stack.a, stack.b]) {
      const metrics = await fetch(`${instance.url}/metrics`, { headers: bearer });
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain("vestibule_signins_total");
      expect((await fetch(`${instance.url}/metrics`)).status).toBe(404);
      const ready = await fetch(`${instance.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready" });
      expect((await fetch(`${instance.url}/healthz`)).status).toBe(200);
    }
  });

  it("a POST with Host: evil.example is refused by nginx's default server and no reset e-mail names evil.example (AUTH_TRUST_HOST=true, AUTH_ALLOWED_HOSTS, no AUTH_URL)", async () => {
    // The instances again, trusting the host nginx forwards instead of AUTH_URL.
    for (const instance of [stack.a, stack.b]) {
      await instance.stop();
      delete instance.env.AUTH_URL;
      Object.assign(instance.env, { AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "localhost" });
      await instance.start();
    }
    const email = "deploy-host@example.com";
    await addUserTo(stack, { email, password: "correct horse battery" });
    const csrf = await httpsRequest(`${stack.origin}/auth/csrf`, { ca: stack.certs.ca });
    const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
    const forged = {
      ca: stack.certs.ca,
      method: "POST",
      headers: { Host: "evil.example", "Content-Type": "application/x-www-form-urlencoded", Cookie: csrf.setCookies.map((c) => c.split(";")[0]).join("; ") },
      body: new URLSearchParams({ csrfToken, email }).toString(),
    };
    // On a connection made for this site (TLS name localhost), Host names another: no answer.
    await expect(httpsRequest(`${stack.origin}/auth/forgot-password`, { ...forged, servername: "localhost" })).rejects.toThrow(/socket hang up|ECONNRESET/);
    // A TLS handshake for another name is refused outright.
    await expect(httpsRequest(`${stack.origin}/auth/forgot-password`, forged)).rejects.toThrow();
    // Plain http: the same.
    const socket = await openSocket(stack.httpPort);
    const answer = readAll(socket);
    socket.write("GET /auth/signin HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
    expect(await answer).toBe("");
    expect(stack.nginx.accessLog()).toMatch(/"POST \/auth\/forgot-password HTTP\/1\.1" 444 /);

    // The genuine request's e-mail names the site; nothing anyone received names evil.example.
    expect((await postForm("/auth/forgot-password", { email })).status).toBe(302);
    const reset = linkIn(await messageTo(email, "/auth/reset-password"));
    expect(reset.origin).toBe(stack.origin);
    for (const message of stack.sink.messages) expect(`${message.text}${message.html}`).not.toContain("evil.example");
    expect(stack.a.logs() + stack.b.logs()).not.toContain("evil.example");
  }, 90_000);
});
