// Dynamic client registration (RFC 7591) with AUTH_PROVIDER_REGISTRATION=open, on both databases:
// public clients only, https: or loopback redirect URIs, a loopback-only client treated as native
// (any port) although it named no application_type, and its consent page saying it is unverified.
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runCleanup } from "../../../app/auth/core/cleanup.server";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { authorizationUrl, discover, follow, insecure, signedInBrowser } from "../../support/provider-flow";

let server: ProviderServer;
beforeAll(async () => {
  server = await startProviderServer({ AUTH_PROVIDER_REGISTRATION: "open", AUTH_RATE_LIMIT_OAUTH_REGISTRATION_CLIENT: "4/3600" });
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  await createUser("ada@example.com", "Ada");
});

const register = (metadata: Record<string, unknown>) =>
  fetch(`${server.url}/oauth/register`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(metadata) });

describe(`dynamic registration on ${dbLabel}`, () => {
  it("registers a public loopback client as native: any loopback port, and its consent page says it is unverified", async () => {
    const as = await discover(server);
    expect(as.registration_endpoint).toBe(`${server.url}/oauth/register`);
    const res = await register({ client_name: "MCP Inspector", redirect_uris: ["http://127.0.0.1/callback"], token_endpoint_auth_method: "none" });
    expect(res.status).toBe(201);
    const client = (await res.json()) as { client_id: string; client_secret?: string };
    expect(client.client_secret).toBeUndefined();
    const row = await testDb().oAuthClient.findUniqueOrThrow({ where: { clientId: client.client_id } });
    expect(row.source).toBe("registration");
    expect(JSON.parse(row.metadata).application_type).toBe("native");

    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const tc = { client: { client_id: client.client_id, token_endpoint_auth_method: "none" }, auth: oauth.None(), secret: null, redirectUri: "http://127.0.0.1:61234/callback" };
    const page = await follow(server, jar, (await authorizationUrl(as, tc)).url);
    expect(page.url.pathname).toMatch(/^\/oauth\/consent\//);
    expect(page.html).toContain('id="consent-unverified"');
    expect(page.html).toContain("MCP Inspector");
  });

  it("refuses a confidential client, a redirect URI that is neither https: nor loopback, and a back-channel logout URI", async () => {
    for (const metadata of [
      { redirect_uris: ["https://app.example.com/cb"] },
      { redirect_uris: ["http://app.example.com/cb"], token_endpoint_auth_method: "none" },
      // Only an operator names where logout tokens are POSTed (ADR 145).
      { redirect_uris: ["https://app.example.com/cb"], token_endpoint_auth_method: "none", backchannel_logout_uri: "https://app.example.com/bc" },
    ]) {
      const res = await register(metadata);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_client_metadata");
    }
    // Nor which URL the engine fetches to check a sector (ADR 163): refused before any fetch.
    const sector = await register({ redirect_uris: ["https://app.example.com/cb"], token_endpoint_auth_method: "none", sector_identifier_uri: "https://10.0.0.1/sector.json" });
    expect(sector.status).toBe(400);
    expect(await sector.json()).toMatchObject({ error: "invalid_client_metadata", error_description: expect.stringContaining("operator") });
    expect(await testDb().oAuthClient.count()).toBe(0);
  });

  it("refuses every grant but the code flow's: no client_credentials (tokens without a user or secret), no device_code", async () => {
    for (const grant_types of [["client_credentials"], ["authorization_code", "client_credentials"], ["urn:ietf:params:oauth:grant-type:device_code"], ["implicit"]]) {
      const res = await register({ client_name: "Tool", redirect_uris: ["http://127.0.0.1/cb"], token_endpoint_auth_method: "none", grant_types, response_types: grant_types.includes("authorization_code") ? ["code"] : [] });
      expect(res.status, JSON.stringify(grant_types)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_client_metadata");
    }
    expect(await testDb().oAuthClient.count()).toBe(0);
  });

  it("a public client stored with client_credentials (before the refusal) still gets no token: the engine refuses the grant to it", async () => {
    const metadata = { client_name: "Old", redirect_uris: [], grant_types: ["client_credentials"], response_types: [], token_endpoint_auth_method: "none", application_type: "web" };
    await testDb().oAuthClient.create({ data: { clientId: "old-public", name: "Old", metadata: JSON.stringify(metadata), source: "registration" } });
    const as = await discover(server);
    const client = { client_id: "old-public", token_endpoint_auth_method: "none" };
    const res = await oauth.clientCredentialsGrantRequest(as, client, oauth.None(), { resource: `${server.url}/api` }, insecure);
    await expect(oauth.processClientCredentialsResponse(as, client, res)).rejects.toMatchObject({ status: 400, error: expect.stringMatching(/^(unauthorized_client|invalid_request)$/) });
    expect(await testDb().oAuthPayload.count({ where: { kind: "ClientCredentials" } })).toBe(0);
  });

  it("stores a clean name (not the site's) and none of the URIs nothing here uses (jwks_uri, request_uris, initiate_login_uri, frontchannel_logout_uri)", async () => {
    // A right-to-left override, a line break, and the site's own name (AUTH_SITE_NAME): only an operator's app may wear it.
    for (const client_name of ["Tool\u202Eexe.txt", "Line\nbreak", "vestibule Login"]) {
      const res = await register({ client_name, redirect_uris: ["http://127.0.0.1/cb"], token_endpoint_auth_method: "none" });
      expect(res.status, client_name).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_client_metadata");
    }
    const res = await register({
      client_name: "  Tool  ",
      redirect_uris: ["http://127.0.0.1/cb"],
      token_endpoint_auth_method: "none",
      jwks_uri: "http://127.0.0.1:9/jwks",
      request_uris: ["https://evil.example/r"],
      initiate_login_uri: "https://evil.example/login",
      frontchannel_logout_uri: "https://evil.example/fc",
    });
    expect(res.status).toBe(201);
    const { client_id } = (await res.json()) as { client_id: string };
    const row = await testDb().oAuthClient.findUniqueOrThrow({ where: { clientId: client_id } });
    expect(row.name).toBe("Tool");
    expect(row.metadata).not.toMatch(/jwks_uri|request_uris|initiate_login_uri|frontchannel_logout_uri|evil\.example|127\.0\.0\.1:9/);
  });

  it("cleanup removes registrations nobody allowed after 30 days, and every provider row past its expiry", async () => {
    const now = new Date();
    const daysAgo = (n: number) => new Date(now.getTime() - n * 24 * 60 * 60 * 1000);
    const client = (clientId: string, createdAt: Date, source = "registration") =>
      testDb().oAuthClient.create({ data: { clientId, name: clientId, metadata: "{}", source, createdAt } });
    await client("old-unused", daysAgo(31));
    await client("old-used", daysAgo(31));
    await client("recent", daysAgo(29));
    await client("old-operator", daysAgo(400), "cli");
    await testDb().oAuthPayload.create({ data: { kind: "Grant", id: "g1", payload: "{}", clientId: "old-used", accountId: "u1", expiresAt: daysAgo(-1) } });
    await testDb().oAuthPayload.create({ data: { kind: "RefreshToken", id: "gone", payload: "{}", expiresAt: daysAgo(0.001) } });
    const result = await runCleanup(now);
    expect(result.ran && { payloads: result.counts.oauthPayloads, registrations: result.counts.oauthRegistrations }).toEqual({ payloads: 1, registrations: 1 });
    expect((await testDb().oAuthClient.findMany({ orderBy: { clientId: "asc" } })).map((c) => c.clientId)).toEqual(["old-operator", "old-used", "recent"]);
  });

  it("registrations are limited per client address (OAUTH_REGISTRATION_CLIENT): then 429 with Retry-After", async () => {
    const metadata = { client_name: "Tool", redirect_uris: ["http://127.0.0.1/cb"], token_endpoint_auth_method: "none" };
    for (let i = 0; i < 4; i++) expect((await register(metadata)).status).toBe(201);
    const refused = await register(metadata);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await testDb().oAuthClient.count()).toBe(4);
  });
});
