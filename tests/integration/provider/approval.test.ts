// Allowing an app is a change (ADR 171), on both databases: the consent page's Allow and a device's
// approval need a recent sign-in, so a copied session cookie cannot approve an app. An old session
// is sent through /auth/reauth and comes back to the same authorization (JS off), which then goes
// on; a session that just signed in is asked nothing more; a remembered consent in the code flow
// goes on as a sign-in to an app already allowed.
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createUser, PASSWORD } from "../../support/auth";
import { call } from "../../support/app-client";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import type { CookieJar } from "../../support/http";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { ageSession, reauthenticate } from "../../support/reauth";
import { answerConsent, authorizationUrl, authorize, confirmDeviceCode, discover, follow, insecure, signedInBrowser, testClient, type Step } from "../../support/provider-flow";

let server: ProviderServer;
let as: oauth.AuthorizationServer;
beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  await createUser("ada@example.com", "Ada");
  as = await discover(server);
});

/** The re-authentication page a step landed on: where it will send the browser back. */
function reauthCallback(step: Step): string {
  expect(step.url.pathname).toBe("/auth/reauth");
  return step.url.searchParams.get("callbackUrl")!;
}

/** Proves who the visitor is on /auth/reauth with the password, and follows the way back. */
async function reauthAndBack(jar: CookieJar, callbackUrl: string): Promise<Step> {
  const res = await reauthenticate(jar, { password: PASSWORD }, { callbackUrl });
  expect([302, 303]).toContain(res.status);
  return follow(server, jar, new URL(res.headers.get("location")!, server.url));
}

const grants = () => testDb().oAuthPayload.count({ where: { kind: "Grant" } });

describe(`allowing an app needs a recent sign-in, on ${dbLabel}`, () => {
  it("a session that just signed in allows on the consent page with nothing more asked", async () => {
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const { callback, consentShown } = await authorize(server, jar, await authorizationUrl(as, tc));
    expect(consentShown).toBe(true);
    expect(callback.searchParams.get("code")).toEqual(expect.any(String));
  });

  it("an old session is sent through reauth before the consent page, comes back to the same authorization, and Allow works", async () => {
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    await ageSession(jar, 11);
    const request = await authorizationUrl(as, tc);
    const asked = await follow(server, jar, request.url);
    const back = reauthCallback(asked);
    expect(back).toMatch(/^\/oauth\/consent\/[\w-]+$/);
    expect(await grants()).toBe(0);

    const consent = await reauthAndBack(jar, back);
    expect(consent.status).toBe(200);
    expect(consent.url.pathname).toBe(back);
    const done = await answerConsent(server, jar, consent, "allow");
    expect(done.status).toBe(0);
    const params = oauth.validateAuthResponse(as, tc.client, done.url, request.state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      tc.client,
      await oauth.authorizationCodeGrantRequest(as, tc.client, tc.auth, params, tc.redirectUri, request.verifier, insecure),
      { expectedNonce: request.nonce, requireIdToken: true },
    );
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it("Allow posted from a page opened before the session grew old is refused to reauth, nothing allowed; after reauth it works", async () => {
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const consent = await follow(server, jar, (await authorizationUrl(as, tc)).url);
    expect(consent.url.pathname).toMatch(/^\/oauth\/consent\//);
    await ageSession(jar, 11);
    const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(consent.html!)![1]!;
    const refused = await call(server.url, jar, consent.url.pathname, { body: { csrfToken, decision: "allow" } });
    expect([302, 303]).toContain(refused.status);
    const reauth = new URL(refused.headers.get("location")!, server.url);
    expect(reauth.pathname).toBe("/auth/reauth");
    expect(reauth.searchParams.get("callbackUrl")).toBe(consent.url.pathname);
    expect(await grants()).toBe(0);

    const again = await reauthAndBack(jar, consent.url.pathname);
    const done = await answerConsent(server, jar, again, "allow");
    expect(done.url.searchParams.get("code")).toEqual(expect.any(String));
    expect(await grants()).toBe(1);
  });

  it("Deny needs no recent sign-in: the app gets access_denied", async () => {
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const consent = await follow(server, jar, (await authorizationUrl(as, tc)).url);
    await ageSession(jar, 11);
    const denied = await answerConsent(server, jar, consent, "deny");
    expect(denied.url.searchParams.get("error")).toBe("access_denied");
  });

  it("in the code flow, a remembered consent and a first-party app go on with an old session (a sign-in to an app already allowed)", async () => {
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    await authorize(server, jar, await authorizationUrl(as, tc));
    await ageSession(jar, 11);
    const remembered = await authorize(server, jar, await authorizationUrl(as, tc));
    expect(remembered.consentShown).toBe(false);
    expect(remembered.callback.searchParams.get("code")).toEqual(expect.any(String));

    const firstParty = await testClient({ name: "Intranet", firstParty: true });
    const straight = await authorize(server, jar, await authorizationUrl(as, firstParty));
    expect(straight.callback.searchParams.get("code")).toEqual(expect.any(String));
  });

  it("a device is approved only after a recent sign-in, even for a first-party app; after reauth the device gets its tokens", async () => {
    const tc = await testClient({ name: "TV", redirectUris: [], grants: ["device_code"], public: true, firstParty: true });
    const started = await oauth.processDeviceAuthorizationResponse(as, tc.client, await oauth.deviceAuthorizationRequest(as, tc.client, tc.auth, { scope: "openid" }, insecure));
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    await ageSession(jar, 11);
    const asked = await confirmDeviceCode(server, jar, started.user_code);
    const back = reauthCallback(asked);
    expect(await grants()).toBe(0);

    // First-party: no consent page; once recent, the approval goes straight on to the device's page.
    const done = await reauthAndBack(jar, back);
    expect(done.url.pathname).toMatch(/^\/device\//);
    expect(done.html).toContain("Device connected");
    const tokens = await oauth.processDeviceCodeResponse(as, tc.client, await oauth.deviceCodeGrantRequest(as, tc.client, tc.auth, started.device_code, insecure));
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it("a device approved by a fresh session is asked once: its Allow on /device is the consent, no second page", async () => {
    const tc = await testClient({ name: "TV", redirectUris: [], grants: ["device_code"], public: true });
    const started = await oauth.processDeviceAuthorizationResponse(as, tc.client, await oauth.deviceAuthorizationRequest(as, tc.client, tc.auth, { scope: "openid" }, insecure));
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const done = await confirmDeviceCode(server, jar, started.user_code);
    expect(done.url.pathname).toMatch(/^\/device\//);
    expect(done.html).toContain("Device connected");
    expect(await grants()).toBe(1);
    const tokens = await oauth.processDeviceCodeResponse(as, tc.client, await oauth.deviceCodeGrantRequest(as, tc.client, tc.auth, started.device_code, insecure));
    expect(tokens.access_token).toEqual(expect.any(String));
    // The owner's notice names the app on a device, never its client_id as if it were a host.
    const notice = await testDb().mailQueue.findFirstOrThrow({ where: { kind: "app-allowed" } });
    expect(notice.payload).not.toContain(tc.client.client_id);
  });
});
