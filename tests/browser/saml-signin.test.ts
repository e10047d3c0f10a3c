// A SAML sign-in in a real Chromium against the production server, JavaScript off and on (ADR 154
// amended): the IdP's page (routed in the browser, another site) posts the answer cross-site to
// the ACS, which carries no cookie; the 303 to the finish step is a top-level GET that carries the
// SameSite=Lax binding cookie the start set, and the browser is signed in. The attacker's own
// answer, posted by a victim's browser, signs the victim in as nobody.
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectBrowser, newContext, startApp, type RunningApp } from "../support/browser";
import { withServerDatabase } from "../support/seed-user";
import { b64, IDP_CERT, requestIdOf, signedResponse, spOf, testIdp } from "../integration/saml/idp";

const IDP = "https://idp.acme.test";
const idp = testIdp(IDP);
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
      data: { organizationId: org.id, idpEntityId: IDP, ssoUrl: `${IDP}/sso`, certificates: JSON.stringify([IDP_CERT]), domains: "acme.test" },
    });
    return connection.id;
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** The page a site other than ours serves: a form posting `samlResponse` to the ACS. */
function postingPage(samlResponse: string): string {
  return `<!doctype html><html><body><form method="post" action="${app.url}/sso/${connectionId}/acs"><input type="hidden" name="SAMLResponse" value="${b64(samlResponse)}"><button id="go">Continue</button></form></body></html>`;
}

/** The IdP in this browser: every request to it answers for `email` with the posting page. */
async function routeIdp(context: BrowserContext, email: string) {
  await context.route(`${IDP}/**`, async (route) => {
    const id = requestIdOf(route.request().url());
    await route.fulfill({ status: 200, contentType: "text/html", body: postingPage(await signedResponse(idp, spOf(app.url, connectionId), id, email)) });
  });
}

const sessionCookie = async (context: BrowserContext) => (await context.cookies()).find((c) => /session-token/.test(c.name) && c.value);

for (const javaScriptEnabled of [false, true]) {
  describe(`SAML sign-in with JavaScript ${javaScriptEnabled ? "on" : "off"}`, () => {
    it("the IdP's cross-site POST, then the finish step in the same browser: signed in", async () => {
      const context = await newContext(browser, { javaScriptEnabled });
      await routeIdp(context, javaScriptEnabled ? "js@acme.test" : "nojs@acme.test");
      const starting = await context.newPage();
      // Playwright does not route a navigation's redirect: the start's 302 to the IdP is seen (its
      // Set-Cookie kept by the browser), then the IdP's URL is opened as its own navigation.
      let idpUrl: string | null = null;
      starting.on("request", (request) => {
        if (request.url().startsWith(`${IDP}/sso`)) idpUrl = request.url();
      });
      await starting.goto(`${app.url}/sso/${connectionId}/signin?callbackUrl=%2Faccount`).catch(() => undefined);
      expect(idpUrl).not.toBeNull();
      // The same browser (its cookies), another tab, for the IdP's page.
      const page = await context.newPage();
      await page.goto(idpUrl!);
      const binding = (await context.cookies()).find((c) => c.name === "authjs.saml-binding");
      expect(binding).toMatchObject({ httpOnly: true, sameSite: "Lax" });
      await Promise.all([page.waitForURL((url) => url.origin === app.url && !url.pathname.startsWith("/sso/")), page.click("#go")]);
      expect(page.url()).not.toContain("error=");
      expect(await sessionCookie(context)).toBeTruthy();
      await context.close();
    });

    it("login CSRF: the attacker's own answer posted by the victim's browser signs nobody in", async () => {
      // The attacker starts the sign-in with no cookies of the victim and has his IdP answer it.
      const started = await fetch(`${app.url}/sso/${connectionId}/signin`, { redirect: "manual" });
      const id = requestIdOf(started.headers.get("Location")!);
      const xml = await signedResponse(idp, spOf(app.url, connectionId), id, "mallory@acme.test");
      const victim = await newContext(browser, { javaScriptEnabled });
      await victim.route("https://evil.example/**", (route) => route.fulfill({ status: 200, contentType: "text/html", body: postingPage(xml) }));
      const page = await victim.newPage();
      await page.goto("https://evil.example/");
      await Promise.all([page.waitForURL((url) => url.origin === app.url && !url.pathname.startsWith("/sso/")), page.click("#go")]);
      expect(page.url()).toContain("error=");
      expect(await sessionCookie(victim)).toBeUndefined();
      await victim.close();
    });
  });
}
