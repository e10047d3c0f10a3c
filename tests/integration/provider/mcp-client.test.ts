// The official MCP SDK's client against /mcp with Vestibule's own provider, end to end over HTTP:
// the 401 sends it to the protected resource metadata, that to the authorization server's
// metadata; it registers itself (dynamic registration), the user signs in on Vestibule's page and
// allows it on the consent page (a browser without JavaScript: a cookie jar), the SDK redeems the
// code for a token for /mcp, calls whoami, and refreshes the token when it stops working.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { forgetGrantChecks } from "../../../app/auth/provider/bearer.server";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { MemoryClientProvider } from "../../support/mcp-client-provider";
import { authorize, signedInBrowser } from "../../support/provider-flow";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";

const REDIRECT = "http://127.0.0.1:43219/callback";
let server: ProviderServer;
let userId: string;

beforeAll(async () => {
  server = await startProviderServer({ AUTH_PROVIDER_REGISTRATION: "open" });
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  forgetGrantChecks();
  userId = (await createUser("ada@example.com", "Ada Lovelace")).id;
});

const mcpUrl = () => new URL(`${server.url}/mcp`);

async function connected(provider: MemoryClientProvider) {
  const client = new Client({ name: "vestibule-sdk-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
  return client;
}

describe(`the MCP SDK's client with Vestibule's provider on ${dbLabel}`, () => {
  it("discovers, registers, gets the user's consent, calls whoami, and refreshes its token", async () => {
    const provider = new MemoryClientProvider("SDK test client", () => REDIRECT);
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    const first = new Client({ name: "vestibule-sdk-test", version: "1.0.0" });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);

    // Registered dynamically, and sent to Vestibule's authorization endpoint for /mcp with PKCE.
    expect(provider.information?.client_id).toBeTruthy();
    const row = await testDb().oAuthClient.findUniqueOrThrow({ where: { clientId: provider.information!.client_id } });
    expect(row.source).toBe("registration");
    const opened = provider.opened!;
    expect(`${opened.origin}${opened.pathname}`).toBe(`${server.url}/oauth/authorize`);
    expect(opened.searchParams.get("resource")).toBe(mcpUrl().href);
    expect(opened.searchParams.get("code_challenge_method")).toBe("S256");
    expect(opened.searchParams.get("scope")?.split(" ")).toContain("offline_access");

    // The user signs in and allows the app; the browser comes back to the client with a code.
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const { callback, consentShown } = await authorize(server, jar, { url: opened, verifier: provider.verifier, state: opened.searchParams.get("state") ?? "", nonce: "" });
    expect(consentShown).toBe(true);
    expect(callback.searchParams.get("iss")).toBe(server.url);
    await transport.finishAuth(callback.searchParams.get("code")!);

    const access = decodeJwt(provider.saved!.access_token);
    expect(access.aud).toBe(mcpUrl().href);
    expect(access.sub).toBe(userId);
    expect(provider.saved!.refresh_token).toBeTruthy();

    const client = await connected(provider);
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.structuredContent).toMatchObject({ sub: userId, client_id: provider.information!.client_id, email: "ada@example.com", name: "Ada Lovelace" });
    await client.close();

    // The access token stops working: the SDK refreshes it (a new access and refresh token) and goes on.
    const before = provider.saved!;
    provider.saved = { ...before, access_token: "no-longer-valid" };
    const again = await connected(provider);
    expect((await again.callTool({ name: "whoami", arguments: {} })).structuredContent).toMatchObject({ sub: userId });
    expect(provider.saved!.access_token).not.toBe("no-longer-valid");
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);
    await again.close();
  });

  it("a token the SDK got for /mcp is refused by /api", async () => {
    const provider = new MemoryClientProvider("SDK test client", () => REDIRECT);
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    await expect(new Client({ name: "t", version: "1" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const opened = provider.opened!;
    const { callback } = await authorize(server, jar, { url: opened, verifier: provider.verifier, state: "", nonce: "" });
    await transport.finishAuth(callback.searchParams.get("code")!);
    const token = provider.saved!.access_token;
    expect((await fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401);
    expect((await fetch(`${server.url}/mcp`, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) })).status).toBe(200);
  });
});
