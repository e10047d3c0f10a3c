// The device flow's polling (RFC 8628 section 3.5, ADR 170) with a real client (oauth4webapi), on
// both databases: a poll sooner than the interval after the previous one answers `slow_down` and
// grows that device code's interval by 5 seconds; polls at the interval answer
// `authorization_pending`; the poll times live in the database. The clock is moved (a fake Date),
// never waited for. And user codes guessed at /device are limited per visitor.
import * as oauth from "oauth4webapi";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createUser, PASSWORD } from "../../support/auth";
import { call } from "../../support/app-client";
import { CookieJar } from "../../support/http";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { answerConsent, confirmDeviceCode, discover, follow, formFields, insecure, signedInBrowser, testClient, type TestClient } from "../../support/provider-flow";

let server: ProviderServer;
let as: oauth.AuthorizationServer;
beforeAll(async () => {
  // Codes typed at /device: three per visitor (their client address, here behind a trusted proxy).
  server = await startProviderServer({ AUTH_TRUSTED_PROXIES: "127.0.0.1", AUTH_RATE_LIMIT_DEVICE_CODE_CLIENT: "3/900" });
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  await createUser("ada@example.com", "Ada");
  as = await discover(server);
});
afterEach(() => {
  vi.useRealTimers();
});

async function startDevice(tc: TestClient) {
  return oauth.processDeviceAuthorizationResponse(as, tc.client, await oauth.deviceAuthorizationRequest(as, tc.client, tc.auth, { scope: "openid" }, insecure));
}

/** One poll of the token endpoint: the tokens, or the error code it answered. */
async function poll(tc: TestClient, deviceCode: string): Promise<string> {
  const res = await oauth.deviceCodeGrantRequest(as, tc.client, tc.auth, deviceCode, insecure);
  try {
    await oauth.processDeviceCodeResponse(as, tc.client, res);
    return "tokens";
  } catch (error) {
    return (error as { error?: string }).error ?? String(error);
  }
}

describe(`device polling on ${dbLabel}`, () => {
  it("a signed-out visitor at /device is asked to sign in first and comes back to /device, its code kept", async () => {
    const bare = await call(server.url, new CookieJar(), "/device");
    expect(bare.status).toBe(302);
    await bare.body?.cancel();
    const to = new URL(bare.headers.get("location")!, server.url);
    expect(to.pathname).toBe("/auth/signin");
    expect(to.searchParams.get("callbackUrl")).toBe("/device");
    const withCode = await call(server.url, new CookieJar(), "/device?user_code=BCDF-GHJK");
    await withCode.body?.cancel();
    expect(new URL(withCode.headers.get("location")!, server.url).searchParams.get("callbackUrl")).toBe("/device?user_code=BCDF-GHJK");
    // Signed in, the same address shows the code form.
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    expect((await follow(server, jar, "/device")).html).toContain('id="device-code-form"');
  });


  it("polling sooner than the interval answers slow_down and grows the interval by 5 s for that code; at the interval it is pending", async () => {
    const tc = await testClient({ name: "TV", redirectUris: [], grants: ["device_code"], public: true });
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: t0 });
    const started = await startDevice(tc);
    expect(started.interval).toBe(5);
    expect(await poll(tc, started.device_code)).toBe("authorization_pending");
    vi.setSystemTime(t0 + 5_000);
    expect(await poll(tc, started.device_code)).toBe("authorization_pending");
    // Too soon: slow_down, and the interval is now 10 s.
    vi.setSystemTime(t0 + 6_000);
    expect(await poll(tc, started.device_code)).toBe("slow_down");
    vi.setSystemTime(t0 + 15_000);
    expect(await poll(tc, started.device_code)).toBe("slow_down");
    // Now 15 s, counted from the last poll.
    vi.setSystemTime(t0 + 30_000);
    expect(await poll(tc, started.device_code)).toBe("authorization_pending");

    // Another device code of the same client keeps its own interval of 5 s.
    const other = await startDevice(tc);
    expect(await poll(tc, other.device_code)).toBe("authorization_pending");
    vi.setSystemTime(t0 + 35_000);
    expect(await poll(tc, other.device_code)).toBe("authorization_pending");

    // Approved: the next poll at the interval gets the tokens.
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    // The Allow on /device is the consent: no second page.
    expect((await confirmDeviceCode(server, jar, started.user_code)).html).toContain("Device connected");
    vi.setSystemTime(t0 + 45_000);
    expect(await poll(tc, started.device_code)).toBe("tokens");
  });

  it("the code's confirmation page names the app and always lists what it asks for, even when the user allowed it before", async () => {
    const tc = await testClient({ name: "TV app", redirectUris: [], public: true, grants: ["device_code"] });
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    for (let round = 0; round < 2; round++) {
      const started = oauth.processDeviceAuthorizationResponse(as, tc.client, await oauth.deviceAuthorizationRequest(as, tc.client, tc.auth, { scope: "openid email profile" }, insecure));
      const { user_code } = await started;
      const entry = await follow(server, jar, "/device");
      const typed = await call(server.url, jar, "/device", { body: { ...formFields(entry.html ?? "", "device-code-form"), user_code } });
      const html = await typed.text();
      expect(html).toContain("TV app");
      expect(html).toMatch(/id="device-scopes"[^]*data-scope="email"[^]*data-scope="profile"/);
      expect(html).not.toContain('id="device-unverified"');
      // Three codes typed per visitor here (DEVICE_CODE_CLIENT): the second round only looks.
      if (round === 1) break;
      const consent = await call(server.url, jar, "/device", { body: formFields(html, "device-confirm-form") });
      const step = await follow(server, jar, new URL(consent.headers.get("location")!, server.url));
      if (step.url.pathname.startsWith("/oauth/consent/")) await answerConsent(server, jar, step, "allow");
    }
  });

  it("the poll times are in the database, one row per device code that lives no longer than the code", async () => {
    const tc = await testClient({ name: "TV", redirectUris: [], grants: ["device_code"], public: true });
    const started = await startDevice(tc);
    expect(await poll(tc, started.device_code)).toBe("authorization_pending");
    const rows = await testDb().oAuthPayload.findMany({ where: { kind: "DevicePoll" } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.clientId).toBe(tc.client.client_id);
    expect(rows[0]!.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 600_000);
    // A poll with a code that does not exist is invalid_grant, and leaves nothing behind.
    expect(await poll(tc, "not-a-device-code")).toBe("invalid_grant");
    expect(await testDb().oAuthPayload.count({ where: { kind: "DevicePoll" } })).toBe(1);
  });

  it("user codes typed at /device are limited per visitor: past the limit 429 with Retry-After, another visitor still types", async () => {
    const from = (address: string) => ({ "X-Forwarded-For": address });
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    let page = (await follow(server, jar, "/device")).html!;
    const guess = (address: string, userCode = "BCDF-GHJK") => call(server.url, jar, "/device", { body: { ...formFields(page, "device-code-form"), user_code: userCode }, headers: from(address) });
    for (let i = 0; i < 3; i++) {
      const wrong = await guess("198.51.100.7");
      // Refused by a redirect back to /device with the reason (Post/Redirect/Get).
      expect(wrong.status).toBe(303);
      await wrong.body?.cancel();
      page = (await follow(server, jar, new URL(wrong.headers.get("location")!, server.url))).html!;
      expect(page).toContain('id="device-error"');
    }
    const refused = await guess("198.51.100.7");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    await refused.body?.cancel();
    // The right code from the refused visitor is refused too: the limit is on typing, not on being wrong.
    const tc = await testClient({ name: "TV", redirectUris: [], grants: ["device_code"], public: true });
    const started = await startDevice(tc);
    const right = await guess("198.51.100.7", started.user_code);
    expect(right.status).toBe(429);
    await right.body?.cancel();
    const other = await guess("198.51.100.8");
    expect(other.status).toBe(303);
    await other.body?.cancel();
    expect((await follow(server, jar, new URL(other.headers.get("location")!, server.url))).html).toContain('id="device-error"');
  });
});
