// requireBearer, protected resource metadata and the two example resources (GET /api/me and the
// /mcp MCP server) through the app's own request handler, on both databases. Tokens are signed
// with the provider's real signing keys (tests/support/access-token.ts) as its engine signs them;
// the MCP side is driven by the official SDK's client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { exportJWK, generateKeyPair } from "jose";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { authRequest } from "../../../app/auth/core/request.server";
import { revokeUserSessions } from "../../../app/auth/core/session.server";
import { revokeAppAccess } from "../../../app/auth/provider/apps.server";
import { forgetGrantChecks, GRANT_CHECK_MS, requireBearer } from "../../../app/auth/provider/bearer.server";
import { forgetProfiles, PROFILE_CACHE_MS } from "../../../app/auth/provider/example-resources.server";
import { forgetSigningKeys, privateJwksForEngine, rotateSigningKeys } from "../../../app/auth/provider/signing-keys.server";
import { signedTokenLongestLife } from "../../../app/auth/provider/lifetimes.server";
import { grantAccess, mintAccessToken, signingKey } from "../../support/access-token";
import { appHandler } from "../../support/app-handler";
import { createUser, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { waitUntil } from "../../support/wait";

const ISSUER = "https://id.example.test";
const API = `${ISSUER}/api`;
const MCP = `${ISSUER}/mcp`;
const PROVIDER_ENV = { AUTH_PROVIDER: "true", AUTH_URL: ISSUER, AUTH_PROVIDER_RESOURCES: undefined, AUTH_PROVIDER_SUBJECT: undefined };
let undoEnv: (() => void) | null = null;
let handle: (request: Request) => Promise<Response>;
let userId: string;

/** fetch, answered by the app in this process (what the SDK's client is given). */
const appFetch = (input: string | URL | Request, init?: RequestInit) => handle(new Request(input, init));

function get(path: string, token?: string, headers: Record<string, string> = {}) {
  return handle(new Request(`${ISSUER}${path}`, { headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers } }));
}

beforeAll(async () => {
  handle = await appHandler();
});

beforeEach(async () => {
  await resetDatabase();
  undoEnv = withEnv(PROVIDER_ENV);
  forgetSigningKeys();
  forgetGrantChecks();
  forgetProfiles();
  userId = (await createUser("ada@example.com", "Ada Lovelace")).id;
  // What consent leaves: the user's grant to the tokens' client.
  await grantAccess(userId);
});

afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  forgetSigningKeys();
  forgetGrantChecks();
});

function challenge(response: Response) {
  return response.headers.get("WWW-Authenticate") ?? "";
}

describe(`GET /api/me on ${dbLabel}`, () => {
  it("answers 404 with the provider off, as do /mcp and the metadata", async () => {
    undoEnv?.();
    undoEnv = withEnv({ AUTH_PROVIDER: undefined, AUTH_URL: ISSUER });
    for (const path of ["/api/me", "/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/api"]) {
      expect((await get(path)).status, path).toBe(404);
    }
  });

  it("without a token: 401 naming the resource's metadata (RFC 9728), readable from any origin", async () => {
    const response = await get("/api/me");
    expect(response.status).toBe(401);
    expect(challenge(response)).toBe(`Bearer resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/api"`);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Access-Control-Expose-Headers")).toContain("WWW-Authenticate");
    expect(response.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    expect(await response.json()).toMatchObject({ error: "invalid_token" });
  });

  it("with a token for /api: the user's sub, and e-mail and name by scope", async () => {
    const full = await get("/api/me", await mintAccessToken(API, userId, "openid email profile"));
    expect(full.status).toBe(200);
    expect(full.headers.get("Cache-Control")).toContain("no-store");
    expect(await full.json()).toEqual({
      sub: userId,
      client_id: "test-client",
      scope: "openid email profile",
      email: "ada@example.com",
      email_verified: false,
      name: "Ada Lovelace",
    });
    expect(await (await get("/api/me", await mintAccessToken(API, userId, "openid"))).json()).toEqual({ sub: userId, client_id: "test-client", scope: "openid" });
    expect(await (await get("/api/me", await mintAccessToken(API, userId, "openid profile"))).json()).toEqual({
      sub: userId,
      client_id: "test-client",
      scope: "openid profile",
      name: "Ada Lovelace",
    });
  });

  it("a change of name shows within the profile cache's bound", async () => {
    const token = await mintAccessToken(API, userId, "openid profile");
    expect((await (await get("/api/me", token)).json()).name).toBe("Ada Lovelace");
    await testDb().user.update({ where: { id: userId }, data: { name: "Ada King" } });
    const started = Date.now();
    await waitUntil(async () => (await (await get("/api/me", token)).json()).name, (name) => name === "Ada King");
    expect(Date.now() - started).toBeLessThan(PROFILE_CACHE_MS + 2_000);
  });

  it("a client's own token (client credentials: sub is the client) has no user", async () => {
    const token = await mintAccessToken(API, "test-client", "email profile");
    expect(await (await get("/api/me", token)).json()).toEqual({ sub: "test-client", client_id: "test-client", scope: "email profile" });
  });

  it("refuses a token for another resource, and /mcp refuses one for /api", async () => {
    for (const aud of [MCP, `${ISSUER}/api2`, "https://other.example/api", ISSUER]) {
      const response = await get("/api/me", await mintAccessToken(API === aud ? MCP : aud, userId, "openid"));
      expect(response.status, aud).toBe(401);
      expect(challenge(response)).toContain('error="invalid_token"');
    }
    const forApi = await mintAccessToken(API, userId, "openid");
    const atMcp = await handle(new Request(MCP, { method: "POST", headers: { Authorization: `Bearer ${forApi}`, "Content-Type": "application/json" }, body: "{}" }));
    expect(atMcp.status).toBe(401);
    expect(challenge(atMcp)).toContain(`resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`);
  });

  it("takes the resource with a trailing slash or another case of the host, and an aud list naming it", async () => {
    for (const aud of [`${API}/`, "HTTPS://ID.EXAMPLE.TEST/api", ["https://other.example/x", API]]) {
      expect((await get("/api/me", await mintAccessToken(API, userId, "openid", { claims: { aud } }))).status, JSON.stringify(aud)).toBe(200);
    }
  });

  it("refuses a token that is not a valid access token of this issuer", async () => {
    const now = Math.floor(Date.now() / 1000);
    const stranger = await generateKeyPair("RS256", { extractable: true });
    const strangerJwk = { ...(await exportJWK(stranger.privateKey)), alg: "RS256", kid: (await signingKey()).kid };
    const bad: [string, Promise<string> | string][] = [
      ["another issuer", mintAccessToken(API, userId, "openid", { claims: { iss: "https://evil.example" } })],
      ["expired past the skew", mintAccessToken(API, userId, "openid", { claims: { iat: now - 700, exp: now - 60 } })],
      ["not yet valid", mintAccessToken(API, userId, "openid", { claims: { nbf: now + 120 } })],
      ["an ID token's typ", mintAccessToken(API, userId, "openid", { typ: "JWT" })],
      ["no typ at all", mintAccessToken(API, userId, "openid", { typ: "" })],
      ["no client_id", mintAccessToken(API, userId, "openid", { claims: { client_id: undefined } })],
      ["no exp", mintAccessToken(API, userId, "openid", { claims: { exp: undefined } })],
      ["no jti", mintAccessToken(API, userId, "openid", { claims: { jti: undefined } })],
      ["no aud", mintAccessToken(API, userId, "openid", { claims: { aud: undefined } })],
      ["another key with the same kid", mintAccessToken(API, userId, "openid", { key: strangerJwk })],
      ["an unsigned token", `${Buffer.from(JSON.stringify({ alg: "none", typ: "at+jwt" })).toString("base64url")}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: API, sub: userId, client_id: "c", jti: "j", iat: now, exp: now + 60 })).toString("base64url")}.`],
      ["garbage", "abc.def.ghi"],
    ];
    for (const [name, token] of bad) {
      const response = await get("/api/me", await token);
      expect(response.status, name).toBe(401);
      expect(challenge(response), name).toContain('error="invalid_token"');
    }
    const malformed = await get("/api/me", undefined, { Authorization: "Basic dXNlcjpwYXNz" });
    expect(malformed.status).toBe(401);
    expect(challenge(malformed)).toContain('error="invalid_request"');
  });

  it("a token verified once is refused again once it expires (the verified-token memory checks exp at every use)", async () => {
    const token = await mintAccessToken(API, userId, "openid");
    expect((await get("/api/me", token)).status).toBe(200);
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 620_000);
      const response = await get("/api/me", token);
      expect(response.status).toBe(401);
      expect(challenge(response)).toContain("expired");
    } finally {
      vi.useRealTimers();
    }
  });

  it("allows a small clock skew on exp and nbf", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await get("/api/me", await mintAccessToken(API, userId, "openid", { claims: { exp: now - 3 } }))).status).toBe(200);
    expect((await get("/api/me", await mintAccessToken(API, userId, "openid", { claims: { nbf: now + 3 } }))).status).toBe(200);
  });

  it("an ES256 token is accepted too", async () => {
    expect((await get("/api/me", await mintAccessToken(API, userId, "openid", { key: await signingKey("ES256") }))).status).toBe(200);
  });
});

describe(`requireBearer on ${dbLabel}`, () => {
  const request = (token: string) => new Request(`${ISSUER}/api/notes`, { headers: { Authorization: `Bearer ${token}` } });
  async function refusal(promise: Promise<unknown>): Promise<Response> {
    try {
      await promise;
    } catch (thrown) {
      if (thrown instanceof Response) return thrown;
      throw thrown;
    }
    throw new Error("expected a refusal");
  }

  it("checks scopes: 403 insufficient_scope naming the scopes to ask for", async () => {
    const token = await mintAccessToken(API, userId, "openid email");
    expect((await requireBearer(request(token), { scopes: ["email"] })).scopes).toEqual(["openid", "email"]);
    const response = await refusal(requireBearer(request(token), { scopes: ["notes:write"] }));
    expect(response.status).toBe(403);
    expect(challenge(response)).toBe(
      `Bearer error="insufficient_scope", error_description="The access token lacks a scope", scope="openid email notes:write", resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/api"`,
    );
    expect(await response.json()).toEqual({ error: "insufficient_scope", error_description: "The access token lacks a scope" });
  });

  it("the resource defaults to the path's first segment, and may be given as a path or a URL", async () => {
    const token = await mintAccessToken(`${ISSUER}/reports`, userId, "openid");
    const at = (path: string) => new Request(`${ISSUER}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    expect((await requireBearer(at("/reports/2026"))).resource).toBe(`${ISSUER}/reports`);
    expect((await requireBearer(at("/x"), { resource: "/reports" })).resource).toBe(`${ISSUER}/reports`);
    expect((await requireBearer(at("/x"), { resource: `${ISSUER}/reports/` })).resource).toBe(`${ISSUER}/reports`);
    expect((await refusal(requireBearer(at("/api/x")))).status).toBe(401);
  });

  it("refuses the tokens of a grant once it is gone (revoked), within the grant check's bound", async () => {
    const grantId = "grant-1";
    await grantAccess(userId, "test-client", grantId);
    // A pairwise subject: the user comes from the grant, not from sub.
    const token = await mintAccessToken(API, "pairwise-subject-1", "openid email", { claims: { gid: grantId } });
    const first = await get("/api/me", token);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ sub: "pairwise-subject-1", email: "ada@example.com" });

    await testDb().oAuthPayload.delete({ where: { kind_id: { kind: "Grant", id: grantId } } });
    const started = Date.now();
    const refused = await waitUntil(() => get("/api/me", token), (r) => r.status === 401);
    expect(Date.now() - started).toBeLessThan(GRANT_CHECK_MS + 2_000);
    expect(challenge(refused)).toContain("revoked");
    // A grant that never existed is refused at once.
    expect((await get("/api/me", await mintAccessToken(API, userId, "openid", { claims: { gid: "no-such-grant" } }))).status).toBe(401);
  });

  it("refuses a user's tokens once the user has no grant for their client (Remove access), within the grant check's bound", async () => {
    const token = await mintAccessToken(API, userId, "openid");
    expect((await get("/api/me", token)).status).toBe(200);
    expect((await get("/api/me", await mintAccessToken(API, userId, "openid", { claims: { client_id: "never-allowed" } }))).status).toBe(401);
    const ar = authRequest(new Request(`${ISSUER}/account`));
    expect(await revokeAppAccess(ar, userId, "test-client")).toBe(true);
    const started = Date.now();
    const refused = await waitUntil(() => get("/api/me", token), (r) => r.status === 401);
    expect(Date.now() - started).toBeLessThan(GRANT_CHECK_MS + 2_000);
    expect(challenge(refused)).toContain("revoked");
  });

  it("a database that cannot answer the grant check gets the JSON endpoints' 503, never a token let through", async () => {
    const token = await mintAccessToken(API, userId, "openid");
    const outage = Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: "P1001" });
    const spy = vi.spyOn(testDb().oAuthPayload, "findFirst").mockRejectedValueOnce(outage);
    try {
      const response = await get("/api/me", token);
      expect(response.status).toBe(503);
      expect(response.headers.get("Retry-After")).toBe("5");
      expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
      expect(await response.json()).toEqual({ error: "ServiceUnavailable" });
    } finally {
      spy.mockRestore();
    }
    expect((await get("/api/me", token)).status).toBe(200);
  });

  it("refuses a user's tokens issued before a sign-out everywhere (or a disable, a delete)", async () => {
    const before = await mintAccessToken(API, userId, "openid", { claims: { iat: Math.floor(Date.now() / 1000) - 5 } });
    expect((await get("/api/me", before)).status).toBe(200);
    await revokeUserSessions(userId);
    expect((await get("/api/me", before)).status).toBe(401);
    // Signing out everywhere also ended the user's grants; the app is allowed again.
    forgetGrantChecks();
    await grantAccess(userId);
    expect((await get("/api/me", before)).status).toBe(401);
    const after = await mintAccessToken(API, userId, "openid", { claims: { iat: Math.floor(Date.now() / 1000) + 2 } });
    expect((await get("/api/me", after)).status).toBe(200);
  });

  it("accepts tokens signed by a rotated-out key until its tokens have expired, then refuses them", async () => {
    const oldKey = await signingKey();
    const beforeRotation = await mintAccessToken(API, userId, "openid");
    await rotateSigningKeys(new Date(), 0);
    forgetSigningKeys();
    const newKey = await signingKey();
    expect(newKey.kid).not.toBe(oldKey.kid);
    expect((await get("/api/me", beforeRotation)).status).toBe(200);
    expect((await get("/api/me", await mintAccessToken(API, userId, "openid", { key: newKey }))).status).toBe(200);
    expect((await privateJwksForEngine()).keys.map((k) => k.kid)).toContain(oldKey.kid);

    // Past the old key's publication (its tokens' longest life after the rotation): gone from the JWKS.
    const life = signedTokenLongestLife(600);
    await testDb().oAuthSigningKey.update({ where: { kid: oldKey.kid }, data: { publishedUntil: new Date(Date.now() - 1_000) } });
    forgetSigningKeys();
    expect(life).toBeGreaterThanOrEqual(600);
    expect((await privateJwksForEngine()).keys.map((k) => k.kid)).not.toContain(oldKey.kid);
    expect((await get("/api/me", beforeRotation)).status).toBe(401);
  });
});

describe(`protected resource metadata on ${dbLabel}`, () => {
  it("is served for /api and /mcp, naming this issuer, with CORS", async () => {
    for (const resource of [API, MCP]) {
      const response = await get(`/.well-known/oauth-protected-resource${new URL(resource).pathname}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
      expect(await response.json()).toEqual({
        resource,
        authorization_servers: [ISSUER],
        scopes_supported: ["openid", "offline_access", "email", "profile"],
        bearer_methods_supported: ["header"],
        resource_signing_alg_values_supported: ["RS256", "ES256"],
        resource_name: "Vestibule",
      });
    }
  });

  it("answers 404 for a path that is no resource here, and for the bare origin unless it is listed", async () => {
    for (const path of ["", "/", "/api/me", "/other", "/mcp/x"]) {
      expect((await get(`/.well-known/oauth-protected-resource${path}`)).status, path).toBe(404);
    }
    undoEnv?.();
    undoEnv = withEnv({ ...PROVIDER_ENV, AUTH_PROVIDER_RESOURCES: `${ISSUER},https://elsewhere.example/api` });
    const root = await get("/.well-known/oauth-protected-resource");
    expect(root.status).toBe(200);
    expect((await root.json()).resource).toBe(ISSUER);
    // Another server's resource: its metadata is that server's to publish.
    expect((await get("/.well-known/oauth-protected-resource/elsewhere")).status).toBe(404);
  });

  it("answers a CORS preflight, and cookie endpoints stay closed to other origins", async () => {
    const preflight = await handle(
      new Request(`${ISSUER}/.well-known/oauth-protected-resource/mcp`, {
        method: "OPTIONS",
        headers: { Origin: "https://inspector.example", "Access-Control-Request-Method": "GET" },
      }),
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const mcpPreflight = await handle(
      new Request(MCP, {
        method: "OPTIONS",
        headers: { Origin: "https://inspector.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version" },
      }),
    );
    expect(mcpPreflight.status).toBe(204);
    expect(mcpPreflight.headers.get("Access-Control-Allow-Headers")).toMatch(/Authorization.*Content-Type.*Mcp-Protocol-Version/);
    expect(mcpPreflight.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    const session = await get("/auth/session", undefined, { Origin: "https://inspector.example" });
    expect(session.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });
});

describe(`/mcp with the MCP SDK's client on ${dbLabel}`, () => {
  it("discovery: the 401 names the metadata, which names this authorization server", async () => {
    const response = await handle(
      new Request(MCP, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
      }),
    );
    expect(response.status).toBe(401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(response);
    expect(resourceMetadataUrl?.href).toBe(`${ISSUER}/.well-known/oauth-protected-resource/mcp`);
    const metadata = await discoverOAuthProtectedResourceMetadata(MCP, { resourceMetadataUrl }, appFetch);
    expect(metadata.resource).toBe(MCP);
    expect(metadata.authorization_servers).toEqual([ISSUER]);
    // Without the header's hint the SDK finds the same document at the path-based URL.
    expect((await discoverOAuthProtectedResourceMetadata(MCP, {}, appFetch)).resource).toBe(MCP);
  });

  it("with a token for /mcp: lists and calls whoami", async () => {
    const token = await mintAccessToken(MCP, userId, "openid email profile offline_access");
    const client = new Client({ name: "vestibule-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(MCP), { fetch: appFetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["whoami"]);
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.structuredContent).toEqual({
      sub: userId,
      client_id: "test-client",
      scope: "openid email profile offline_access",
      email: "ada@example.com",
      email_verified: false,
      name: "Ada Lovelace",
    });
    await client.close();
  });

  it("the SDK's client is refused with a token for another resource", async () => {
    const token = await mintAccessToken(API, userId, "openid");
    const client = new Client({ name: "vestibule-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(MCP), { fetch: appFetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await expect(client.connect(transport)).rejects.toMatchObject({ code: 401, message: expect.stringContaining("for another resource") });
  });

  it("answers a browser client of another origin (a POST with a token and an Origin), and refuses it without a token", async () => {
    const token = await mintAccessToken(MCP, userId, "openid");
    const body = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "whoami", arguments: {} } });
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25", Origin: "https://inspector.example" };
    const allowed = await handle(new Request(MCP, { method: "POST", headers: { ...headers, Authorization: `Bearer ${token}` }, body }));
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect((await allowed.json()).result.structuredContent.sub).toBe(userId);
    // A cookie-borne POST from another origin is still refused everywhere else.
    const cookieRoute = await handle(new Request(`${ISSUER}/auth/session`, { method: "POST", headers: { "Content-Type": "application/json", Origin: "https://inspector.example" }, body: "{}" }));
    expect(cookieRoute.status).toBe(403);
  });

  it("is stateless: GET and DELETE answer 405, each POST stands alone", async () => {
    const token = await mintAccessToken(MCP, userId, "openid");
    for (const method of ["GET", "DELETE"]) {
      const response = await handle(new Request(MCP, { method, headers: { Authorization: `Bearer ${token}`, Accept: "text/event-stream" } }));
      expect(response.status, method).toBe(405);
      expect(response.headers.get("Allow")).toBe("POST, OPTIONS");
    }
    // A tools/call without an initialize before it: any instance can answer any request.
    const response = await handle(
      new Request(MCP, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "whoami", arguments: {} } }),
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("Mcp-Session-Id")).toBeNull();
    expect((await response.json()).result.structuredContent.sub).toBe(userId);
  });
});
