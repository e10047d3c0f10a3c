// An organization's OpenID Connect connection in Chromium with JavaScript off, against the
// production build and the project's test IdP: the owner proves the domain by DNS (the test's own
// resolver), is refused a local issuer on /orgs/<slug> (an operator adds it with the command), sees
// the redirect URI it must register, registers that URI at the IdP, and a person of the domain signs in through
// /sso/oidc/<id>/signin: account and membership made just in time.
import AxeBuilder from "@axe-core/playwright";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { startDnsServer, type DnsServer } from "../support/dns-server";
import { startTestIdp, type TestIdp } from "../support/idp";
import { seedUser } from "../support/seed-user";
import { signInWithPassword } from "../support/signin-form";

const OWNER = { email: "owner@acme.example", password: "owner-password-0123", name: "Olive Owner" };
const PERSON = { sub: "acme-pat", email: "pat@acme.example", emailVerified: true, name: "Pat Acme", password: "pat-password" };
const CLIENT = { clientId: "acme-portal", clientSecret: "acme-portal-secret-0123456789" };

/**
 * `npm run oidc:connection`'s script against the running app's database, as an operator runs it.
 * Not spawnSync: the test IdP it asks for discovery answers from this very process.
 */
async function addOidcConnectionByCommand(app: RunningApp, c: { org: string; issuer: string; clientId: string; clientSecret: string; domains: string }) {
  const dir = mkdtempSync(path.join(tmpdir(), "oidc-secret-"));
  const secretFile = path.join(dir, "secret");
  writeFileSync(secretFile, c.clientSecret, { mode: 0o600 });
  try {
    const args = ["node_modules/tsx/dist/cli.mjs", "scripts/oidc-connection.ts", "--org", c.org, "--issuer", c.issuer, "--client-id", c.clientId, "--client-secret-file", secretFile, "--domains", c.domains];
    await promisify(execFile)(process.execPath, args, { cwd: process.cwd(), env: app.env, encoding: "utf8" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let browser: Browser;
let idp: TestIdp;
let dns: DnsServer;
let app: RunningApp;

beforeAll(async () => {
  [browser, dns, idp] = await Promise.all([connectBrowser(), startDnsServer(), startTestIdp({ clients: [CLIENT], users: [PERSON] })]);
  app = await startApp({ AUTH_ORGANIZATIONS: "true", AUTH_DNS_SERVERS: dns.address });
  await seedUser(app, { ...OWNER, verified: true });
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await idp?.stop();
  await dns?.close();
});

describe("OpenID Connect connections in Chromium with JavaScript off", () => {
  it("the owner adds a connection for a verified domain; a person of the domain signs in through it and joins", async () => {
    const owner = await newContext(browser, { javaScriptEnabled: false });
    const page = await owner.newPage();
    await page.goto(`${app.url}/auth/signin`);
    await signInWithPassword(page, OWNER.email, OWNER.password);
    await page.waitForURL(`${app.url}/`);

    await page.goto(`${app.url}/orgs/new`);
    await page.locator("#org-name").fill("Acme");
    await page.locator("#org-slug").fill("acme");
    await page.getByRole("button", { name: "Create the organization" }).click();
    await page.waitForURL(/\/orgs\/acme\?done=created/);
    // Without a verified domain the section says what to do first.
    await expect(page.locator("section[aria-labelledby=oidc-heading]").textContent()).resolves.toContain("Verify a domain first");

    await page.locator("#domain-name").fill("acme.example");
    await page.getByRole("button", { name: "Add the domain" }).click();
    await page.waitForURL(/done=domain-added/);
    const token = (await page.locator('[data-domain="acme.example"] dd code').nth(2).textContent())!;
    dns.setTxt("_vestibule-challenge.acme.example", [token]);
    await page.getByRole("button", { name: "Verify acme.example" }).click();
    await page.waitForURL(/done=domain-verified/);

    // The test IdP listens on this machine: the page (an organization's admin, in production)
    // refuses an issuer that is not a public https address, and says who can add one.
    await page.getByLabel("Issuer URL").fill(idp.issuer);
    await page.getByLabel("Client id").fill(CLIENT.clientId);
    await page.getByLabel("Client secret").fill(CLIENT.clientSecret);
    await page.getByLabel("acme.example").check();
    await page.getByRole("button", { name: "Add the OpenID Connect connection" }).click();
    await expect(page.locator("main").textContent()).resolves.toContain("The issuer must be an https address on the public internet");
    // The site's operator adds it with the command (a private issuer is theirs to allow).
    await addOidcConnectionByCommand(app, { org: "acme", issuer: idp.issuer, ...CLIENT, domains: "acme.example" });
    await page.goto(`${app.url}/orgs/acme`);
    const item = page.locator("#oidc-connections li");
    const id = (await item.getAttribute("data-connection"))!;
    const redirectUri = `${app.url}/sso/oidc/${id}/callback`;
    await expect(item.textContent()).resolves.toContain(redirectUri);
    // The section (the list and the form) has no WCAG 2.2 A/AA violation, looked at with scripts on
    // (axe needs them; the markup is the same server-rendered page).
    const look = await newContext(browser, { storageState: await owner.storageState() });
    const lookPage = await look.newPage();
    await lookPage.goto(`${app.url}/orgs/acme`);
    const axe = await new AxeBuilder({ page: lookPage }).include("section[aria-labelledby=oidc-heading]").withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
    expect(axe.violations.map((v) => v.id)).toEqual([]);
    await look.close();
    await owner.close();

    // The IdP's administrator registers the redirect URI shown (the test IdP takes its clients at start).
    const port = idp.port;
    await idp.stop();
    idp = await startTestIdp({ port, strictPort: true, clients: [{ ...CLIENT, callbackPath: `/sso/oidc/${id}/callback` }], users: [PERSON] });

    const visitor = await newContext(browser, { javaScriptEnabled: false });
    const signIn = await visitor.newPage();
    await signIn.goto(`${app.url}/sso/oidc/${id}/signin?callbackUrl=%2Faccount`);
    await signIn.locator("#idp-email").fill(PERSON.email);
    await signIn.locator("#idp-password").fill(PERSON.password);
    await signIn.locator("#idp-submit").click();
    await signIn.waitForURL((url) => url.origin === app.url && url.pathname === "/welcome");
    const session = await (await signIn.request.get(`${app.url}/auth/session`)).json();
    expect(session.user).toMatchObject({ email: PERSON.email, name: PERSON.name });
    await signIn.goto(`${app.url}/orgs`);
    await expect(signIn.locator("main").textContent()).resolves.toContain("Acme");
    await visitor.close();
  });
});
