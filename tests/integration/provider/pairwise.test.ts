// Pairwise subjects (AUTH_PROVIDER_SUBJECT=pairwise), on both databases, with a real client
// (oauth4webapi): one `sub` per client host, stable across tokens, different across hosts, in the
// ID token, userinfo, JWT access tokens, introspection, GET /api/me and logout tokens; requireBearer
// maps it back to the user; a client on several hosts needs a sector identifier; the setting is
// checked at start.
import * as oauth from "oauth4webapi";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../app/auth/core/config.server";
import { revokeUserSessions } from "../../../app/auth/core/session.server";
import { mintAccessToken } from "../../support/access-token";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { codeFlow, discover, insecure, signedInBrowser, testClient as addTestClient, type TestClient } from "../../support/provider-flow";

let server: ProviderServer;
let as: oauth.AuthorizationServer;
let userId: string;
beforeAll(async () => {
  server = await startProviderServer({ AUTH_PROVIDER_SUBJECT: "pairwise" });
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  userId = (await createUser("ada@example.com", "Ada")).id;
  as = await discover(server);
});

const appOn = (host: string, extra: Parameters<typeof addTestClient>[0] = {}) =>
  addTestClient({ redirectUris: [`https://${host}/cb`], redirectUri: `https://${host}/cb`, ...extra });

async function signIn(tc: TestClient, extra: Record<string, string> = {}) {
  const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
  return (await codeFlow(server, as, tc, jar, { scope: "openid email offline_access", ...extra })).tokens;
}

describe(`pairwise subjects on ${dbLabel}`, () => {
  it("one sub per client host: stable across tokens and clients of that host, different across hosts, never the user's id", async () => {
    expect((await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()).subject_types_supported).toContain("pairwise");
    const notes = await appOn("notes.example.com");
    const notesToo = await appOn("notes.example.com");
    const other = await appOn("other.example.org");
    const a = decodeJwt((await signIn(notes)).id_token!).sub;
    const again = decodeJwt((await signIn(notes)).id_token!).sub;
    const sameHost = decodeJwt((await signIn(notesToo)).id_token!).sub;
    const b = decodeJwt((await signIn(other)).id_token!).sub;
    expect(a).toEqual(expect.any(String));
    expect(a).not.toBe(userId);
    expect(again).toBe(a);
    expect(sameHost).toBe(a);
    expect(b).not.toBe(a);
    expect(b).not.toBe(userId);
    expect(await testDb().oAuthPairwiseSubject.count()).toBe(2);
  });

  it("userinfo, introspection, the refresh's ID token, a JWT access token and GET /api/me say the same pairwise sub; /api/me finds the user", async () => {
    const tc = await appOn("notes.example.com");
    const tokens = await signIn(tc);
    const sub = decodeJwt(tokens.id_token!).sub!;
    const info = await oauth.processUserInfoResponse(as, tc.client, sub, await oauth.userInfoRequest(as, tc.client, tokens.access_token, insecure));
    expect(info).toMatchObject({ sub, email: "ada@example.com" });
    const introspected = await oauth.processIntrospectionResponse(as, tc.client, await oauth.introspectionRequest(as, tc.client, tc.auth, tokens.refresh_token!, insecure));
    expect(introspected).toMatchObject({ active: true, sub });
    const refreshed = await oauth.processRefreshTokenResponse(as, tc.client, await oauth.refreshTokenGrantRequest(as, tc.client, tc.auth, tokens.refresh_token!, insecure));
    expect(decodeJwt(refreshed.id_token!).sub).toBe(sub);

    const api = await signIn(tc, { resource: `${server.url}/api`, scope: "openid email" });
    expect(decodeJwt(api.access_token).sub).toBe(sub);
    const me = await fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${api.access_token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ sub, email: "ada@example.com" });
    // A token naming no grant: requireBearer maps the pairwise sub back to the user, whose grant for the client lives.
    const bare = await mintAccessToken(`${server.url}/api`, sub, "openid email", { claims: { client_id: tc.client.client_id } });
    const mapped = await fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${bare}` } });
    expect(mapped.status).toBe(200);
    expect(await mapped.json()).toMatchObject({ sub, email: "ada@example.com" });
    const stranger = await mintAccessToken(`${server.url}/api`, "not-a-known-sub", "openid email", { claims: { client_id: tc.client.client_id } });
    expect((await fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${stranger}` } })).status).toBe(401);
  });

  it("the logout token names the app's pairwise sub", async () => {
    const tc = await appOn("notes.example.com", { backchannelLogoutUri: "https://notes.example.com/bc" });
    const sub = decodeJwt((await signIn(tc)).id_token!).sub;
    await revokeUserSessions(userId);
    expect((await testDb().backchannelLogout.findMany()).map((r) => r.sub)).toEqual([sub]);
  });

  it("a client on several hosts needs a sector identifier URI: refused with a clear error, accepted with one", async () => {
    await expect(addTestClient({ redirectUris: ["https://a.example.com/cb", "https://b.example.com/cb"] })).rejects.toThrow(/share one host.*--sector-identifier-uri/);
    await expect(addTestClient({ redirectUris: ["https://a.example.com/cb", "https://b.example.com/cb"], sectorIdentifierUri: "http://a.example.com/s.json" })).rejects.toThrow(/https/);
    const tc = await addTestClient({ redirectUris: ["https://a.example.com/cb", "https://b.example.com/cb"], sectorIdentifierUri: "https://a.example.com/sector.json" });
    const row = await testDb().oAuthClient.findUniqueOrThrow({ where: { clientId: tc.client.client_id } });
    expect(JSON.parse(row.metadata)).toMatchObject({ sector_identifier_uri: "https://a.example.com/sector.json" });
    // Several paths on one host are one sector.
    await expect(addTestClient({ redirectUris: ["https://a.example.com/cb", "https://a.example.com/other"] })).resolves.toBeTruthy();
  });

  it("AUTH_PROVIDER_SUBJECT is checked at start: public and pairwise only", () => {
    const base = { NODE_ENV: "test", AUTH_SECRET: "s".repeat(40), AUTH_URL: "https://id.example.com", AUTH_PROVIDER: "true", VESTIBULE_DATA_DIR: process.env.VESTIBULE_DATA_DIR };
    expect(loadConfig({ ...base }).provider?.subject).toBe("public");
    expect(loadConfig({ ...base, AUTH_PROVIDER_SUBJECT: "pairwise" }).provider?.subject).toBe("pairwise");
    expect(() => loadConfig({ ...base, AUTH_PROVIDER_SUBJECT: "per-client" })).toThrow(/AUTH_PROVIDER_SUBJECT must be "public" or "pairwise"/);
  });
});
