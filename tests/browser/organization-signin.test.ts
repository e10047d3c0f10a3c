// The sign-in page with an organization's connection (ADR 152, 165), in a real Chromium against
// the production server, with JavaScript off (two pages) and on (the page swaps in place after
// asking the server): an address of a domain the organization verified and a connection covers
// offers "Continue with <organization>"; another address does not; and while the organization
// requires its connection, a password is refused with its sign-in named and offered.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectBrowser, gotoHydrated, newContext, startApp, type RunningApp } from "../support/browser";
import { seedUser, withServerDatabase } from "../support/seed-user";
import { enterAddress, SIGNIN, submitPassword } from "../support/signin-form";

const CERT = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/saml/idp-cert.pem"), "utf8");

let browser: Browser;
let app: RunningApp;
let connectionId: string;

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startApp({ AUTH_ORGANIZATIONS: "true" });
  connectionId = await withServerDatabase(app, async (client) => {
    const org = await client.organization.create({ data: { name: "Acme Corp", slug: "acme" } });
    await client.organizationDomain.create({
      data: { organizationId: org.id, domain: "acme.test", verificationToken: "t", state: "verified", verifiedDomain: "acme.test", verifiedAt: new Date() },
    });
    const connection = await client.samlConnection.create({
      data: { organizationId: org.id, idpEntityId: "https://idp.acme.test", ssoUrl: "https://idp.acme.test/sso", certificates: JSON.stringify([CERT]), domains: "acme.test" },
    });
    return connection.id;
  });
  for (const email of ["nojs@acme.test", "js@acme.test"]) await seedUser(app, { email, password: "correct horse battery" });
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

const requireSso = (on: boolean) => withServerDatabase(app, (client) => client.organization.updateMany({ data: { requireSso: on } }));

for (const javaScriptEnabled of [false, true]) {
  describe(`the organization's sign-in with JavaScript ${javaScriptEnabled ? "on" : "off"}`, () => {
    it("the address step offers Continue with the organization for its domain only", async () => {
      const context = await newContext(browser, { javaScriptEnabled });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      if (javaScriptEnabled) await gotoHydrated(page, `${app.url}/auth/signin?callbackUrl=%2Faccount`);
      else await page.goto(`${app.url}/auth/signin?callbackUrl=%2Faccount`);

      await enterAddress(page, "Someone@Acme.test");
      const link = page.locator("#signin-connections a");
      await link.waitFor();
      expect(await link.textContent()).toBe("Continue with Acme Corp");
      expect(await link.getAttribute("href")).toBe(`/sso/${connectionId}/signin?callbackUrl=%2Faccount`);
      // The password and the e-mail link stay beside it.
      expect(await page.locator(SIGNIN.password).count()).toBe(1);

      await enterAddress(page, "someone@plain.test");
      expect(await page.locator("#signin-connections").count()).toBe(0);
      expect(await page.locator(SIGNIN.password).count()).toBe(1);
      expect(errors).toEqual([]);
      await context.close();
    });

    it("while it requires its connection, a password is refused with the organization's sign-in named and offered", async () => {
      await requireSso(true);
      try {
        const context = await newContext(browser, { javaScriptEnabled });
        const page = await context.newPage();
        if (javaScriptEnabled) await gotoHydrated(page, `${app.url}/auth/signin`);
        else await page.goto(`${app.url}/auth/signin`);
        await enterAddress(page, javaScriptEnabled ? "js@acme.test" : "nojs@acme.test");
        await submitPassword(page, "correct horse battery");
        await page.waitForURL(/error=SsoRequired/);
        expect(await page.getByRole("alert").first().textContent()).toContain("Acme Corp signs you in through its company sign-in.");
        const link = page.locator("#signin-connections a");
        expect(await link.textContent()).toBe("Continue with Acme Corp");
        expect(await link.getAttribute("href")).toMatch(new RegExp(`^/sso/${connectionId}/signin\\?callbackUrl=`));
        await context.close();
      } finally {
        await requireSso(false);
      }
    });
  });
}
