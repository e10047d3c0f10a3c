// Dynamic client registration (RFC 7591) with AUTH_PROVIDER_REGISTRATION=open, on both databases:
// public clients only, https: or loopback redirect URIs, a loopback-only client treated as native
// (any port) although it named no application_type, and its consent page saying it is unverified.
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { authorizationUrl, discover, follow, signedInBrowser } from "../../support/provider-flow";

let server: ProviderServer;
beforeAll(async () => {
  server = await startProviderServer({ AUTH_PROVIDER_REGISTRATION: "open" });
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

  it("refuses a confidential client and a redirect URI that is neither https: nor loopback", async () => {
    for (const metadata of [
      { redirect_uris: ["https://app.example.com/cb"] },
      { redirect_uris: ["http://app.example.com/cb"], token_endpoint_auth_method: "none" },
    ]) {
      const res = await register(metadata);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_client_metadata");
    }
    expect(await testDb().oAuthClient.count()).toBe(0);
  });
});
