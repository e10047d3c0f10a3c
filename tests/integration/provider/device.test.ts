// The device flow's polling (RFC 8628 section 3.5, ADR 170) with a real client (oauth4webapi), on
// both databases: a poll sooner than the interval after the previous one answers `slow_down` and
// grows that device code's interval by 5 seconds; polls at the interval answer
// `authorization_pending`; the poll times live in the database. The clock is moved (a fake Date),
// never waited for.
import * as oauth from "oauth4webapi";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { answerConsent, confirmDeviceCode, discover, insecure, signedInBrowser, testClient, type TestClient } from "../../support/provider-flow";

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
    const consent = await confirmDeviceCode(server, jar, started.user_code);
    await answerConsent(server, jar, consent, "allow");
    vi.setSystemTime(t0 + 45_000);
    expect(await poll(tc, started.device_code)).toBe("tokens");
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
});
