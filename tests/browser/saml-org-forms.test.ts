// The SAML section of /orgs/<slug> in Chromium with JavaScript off, against the production server
// (docs/features/saml.md): an owner pastes the IdP's metadata XML and adds the connection, sees a
// bad paste refused beside the form in words, adds a second certificate and removes the first (the
// last one offers no remove button), and turns IdP-initiated sign-in on and off.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { X509Certificate } from "node:crypto";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { signInWithPassword } from "../support/signin-form";
import { seedUser, withServerDatabase } from "../support/seed-user";
import { OTHER_CERT, testIdp } from "../integration/saml/idp";

const USER = { email: "owner@gamma.example", password: "correct horse battery", name: "Olga", verified: true };
const IDP = "https://idp.gamma.example";

let browser: Browser;
let app: RunningApp;

beforeAll(async () => {
  [browser, app] = await Promise.all([connectBrowser(), startApp({ AUTH_ORGANIZATIONS: "true" })]);
  await seedUser(app, USER);
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("the SAML section without JavaScript", () => {
  it("adds a connection from pasted metadata, rotates its certificate and switches IdP-initiated sign-in", async () => {
    const context = await newContext(browser, { javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto(`${app.url}/auth/signin?callbackUrl=%2Forgs%2Fnew`);
      await signInWithPassword(page, USER.email, USER.password);
      await page.waitForURL(`${app.url}/orgs/new`);
      await page.locator("#org-name").fill("Gamma");
      await page.locator("#org-slug").fill("gamma");
      await page.getByRole("button", { name: "Create the organization" }).click();
      await page.waitForURL(/\/orgs\/gamma\?done=created/);
      // The domain counts as verified (its DNS check has tests of its own).
      await withServerDatabase(app, async (db) => {
        const org = await db.organization.findUniqueOrThrow({ where: { slug: "gamma" } });
        await db.organizationDomain.create({ data: { organizationId: org.id, domain: "gamma.example", verificationToken: "t", state: "verified", verifiedDomain: "gamma.example", verifiedAt: new Date() } });
      });
      await page.goto(`${app.url}/orgs/gamma`);

      const metadata = testIdp(IDP).getMetadata();
      const form = page.locator("#org-saml-form");
      // A bad paste first: refused beside the form, in words.
      await form.getByLabel("Or its metadata XML, pasted").fill(metadata.replace(/HTTP-Redirect/g, "HTTP-Artifact"));
      await form.getByLabel("Verified domains it serves (separated by spaces)").fill("gamma.example");
      await form.getByRole("button", { name: "Add the SAML connection" }).click();
      await expect(page.locator("#org-form-error").textContent()).resolves.toContain("no sign-in URL for the HTTP-Redirect binding");

      await page.goto(`${app.url}/orgs/gamma`);
      await form.getByLabel("Or its metadata XML, pasted").fill(metadata);
      await form.getByLabel("Verified domains it serves (separated by spaces)").fill("gamma.example");
      await form.getByRole("button", { name: "Add the SAML connection" }).click();
      await page.waitForURL(/done=saml-added/);
      const connection = page.locator("#saml-connections > li").first();
      await expect(connection.locator("strong").first().textContent()).resolves.toBe(IDP);
      await expect(connection.textContent()).resolves.toContain("The last certificate cannot be removed");
      await expect(connection.textContent()).resolves.toContain("Sign-ins started from the identity provider are refused.");

      // Rotation: add the new certificate, remove the old one.
      await connection.getByLabel("New certificate (PEM), for a rotation").fill(OTHER_CERT);
      await connection.getByRole("button", { name: "Add the certificate" }).click();
      await page.waitForURL(/done=saml-certificate-added/);
      const certificates = page.locator("#saml-connections > li").first().locator("[data-fingerprint]");
      await expect(certificates.count()).resolves.toBe(2);
      await certificates.first().getByRole("button", { name: "Remove this certificate" }).click();
      await page.waitForURL(/done=saml-certificate-removed/);
      const left = page.locator("#saml-connections > li").first().locator("[data-fingerprint]");
      await expect(left.getAttribute("data-fingerprint")).resolves.toBe(new X509Certificate(OTHER_CERT).fingerprint256);

      // IdP-initiated sign-in: on, then off.
      await page.getByRole("button", { name: "Accept sign-ins started from the identity provider" }).click();
      await page.waitForURL(/done=saml-idp-initiated-on/);
      await expect(page.locator("#saml-connections").textContent()).resolves.toContain("Sign-ins started from the identity provider are accepted.");
      await page.getByRole("button", { name: "Refuse sign-ins started from the identity provider" }).click();
      await page.waitForURL(/done=saml-idp-initiated-off/);
    } finally {
      await context.close();
    }
  });
});
