// Two instances of the provider on one PostgreSQL database (this process and another one,
// tests/support/provider-instance.ts) redeeming the same code, then the same refresh token, at
// the same moment: one conditional UPDATE decides, so there is never a second live token family.
// And a device polling both instances is measured as one: its poll times are in the database.
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { otherInstance } from "../../support/other-instance";
import { postgresUnreachable } from "../../support/postgres-required";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { authorizationUrl, authorize, codeFlow, discover, signedInBrowser, testClient, type TestClient } from "../../support/provider-flow";

const skip = dbLabel !== "postgres" || (await postgresUnreachable("two provider instances")) !== null;

let server: ProviderServer;
beforeAll(async () => {
  if (skip) return;
  server = await startProviderServer({ AUTH_PROVIDER_REFRESH_GRACE: "30" });
  await resetDatabase();
  await createUser("ada@example.com", "Ada");
});
afterAll(async () => {
  await server?.stop();
});

type Answer = { status: number; body: Record<string, unknown> };

/** Starts the other instance; `go()` makes it send its token request and resolves with the answer. */
function otherTokenInstance(body: URLSearchParams, tc: TestClient): Promise<{ go: () => Promise<Answer> }> {
  return otherInstance<Answer>({
    TOKEN_BODY: body.toString(),
    TOKEN_AUTHORIZATION: `Basic ${Buffer.from(`${encodeURIComponent(tc.client.client_id)}:${encodeURIComponent(tc.secret!)}`).toString("base64")}`,
  });
}

async function here(as: oauth.AuthorizationServer, body: URLSearchParams, tc: TestClient): Promise<Answer> {
  const res = await fetch(as.token_endpoint!, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: `Basic ${Buffer.from(`${encodeURIComponent(tc.client.client_id)}:${encodeURIComponent(tc.secret!)}`).toString("base64")}` },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.skipIf(skip)("two provider instances on PostgreSQL", () => {
  it("race the same code: one wins, the other is refused and revokes what the winner got", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const request = await authorizationUrl(as, tc);
    const { callback } = await authorize(server, jar, request);
    const body = new URLSearchParams({ grant_type: "authorization_code", code: callback.searchParams.get("code")!, redirect_uri: tc.redirectUri, code_verifier: request.verifier });
    const other = await otherTokenInstance(body, tc);
    const [a, b] = await Promise.all([other.go(), here(as, body, tc)]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 400]);
    const loser = a.status === 400 ? a : b;
    expect(loser.body.error).toBe("invalid_grant");
    const winner = a.status === 200 ? a : b;
    // The winner's refresh token belongs to a revoked grant: no live family is left.
    const r = await oauth.refreshTokenGrantRequest(as, tc.client, tc.auth, winner.body.refresh_token as string, { [oauth.allowInsecureRequests]: true });
    await expect(oauth.processRefreshTokenResponse(as, tc.client, r)).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("a device polling one instance right after the other is told slow_down: the poll times are shared", async () => {
    const as = await discover(server);
    const tc = await testClient({ name: "TV", redirectUris: [], grants: ["device_code"] });
    const started = await oauth.processDeviceAuthorizationResponse(as, tc.client, await oauth.deviceAuthorizationRequest(as, tc.client, tc.auth, { scope: "openid" }, { [oauth.allowInsecureRequests]: true }));
    const body = new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: started.device_code });
    const other = await otherTokenInstance(body, tc);
    expect((await here(as, body, tc)).body.error).toBe("authorization_pending");
    const there = await other.go();
    expect(there.status).toBe(400);
    expect(there.body.error).toBe("slow_down");
  });

  it("race the same refresh token: both get the one answer, one refresh token lives", async () => {
    const as = await discover(server);
    const tc = await testClient({ name: "Race" });
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const { tokens } = await codeFlow(server, as, tc, jar);
    const body = new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token! });
    const other = await otherTokenInstance(body, tc);
    const [a, b] = await Promise.all([other.go(), here(as, body, tc)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.refresh_token).toBe(b.body.refresh_token);
    expect(await testDb().oAuthPayload.count({ where: { kind: "RefreshToken", consumedAt: null, clientId: tc.client.client_id } })).toBe(1);
  });
});
