// The two resources that ship as examples of requireBearer (docs/features/mcp.md): GET /api/me,
// the token's user as JSON, and /mcp, an MCP server (the official TypeScript SDK, Streamable
// HTTP) with one tool, `whoami`, that answers the same. Both are 404 unless AUTH_PROVIDER=true.
//
// /mcp is stateless (docs/decisions/143-mcp-example-server.md): each POST builds a server for that
// request and answers in JSON, so any instance behind a load balancer answers any request and
// nothing is kept between them; GET (a server-sent event stream) and DELETE (ending a session)
// answer 405 as the Streamable HTTP transport allows for a server without sessions.
import { createRequire } from "node:module";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { db } from "../../db/client.server";
import { getConfig } from "../core/config.server";
import { requireBearer, type BearerToken } from "./bearer.server";
import { corsResource, resourceJson, resourcePreflight, withResourceCors } from "./protected-resource.server";

/** The example resources' paths under AUTH_URL (also their resource identifiers' paths). */
export const API_RESOURCE_PATH = "/api";
export const MCP_RESOURCE_PATH = "/mcp";
/** The MCP server's name and version as it introduces itself. */
const MCP_SERVER_VERSION = "1.0.0";

export type TokenProfile = {
  sub: string;
  client_id: string;
  scope: string;
  email?: string | null;
  email_verified?: boolean;
  name?: string | null;
};

/**
 * What a token may see of its user: always `sub` (as the token says it: pairwise when the client
 * has pairwise subjects), `client_id` and `scope`; `email` and `email_verified` with the `email`
 * scope, `name` with `profile`. A token without a user (client credentials) or whose user is gone
 * has only the first three.
 */
export function tokenProfile(token: BearerToken): TokenProfile | Promise<TokenProfile> {
  const profile: TokenProfile = { sub: token.sub, client_id: token.clientId, scope: token.scopes.join(" ") };
  const wantsEmail = token.scopes.includes("email");
  const wantsName = token.scopes.includes("profile");
  if (!token.userId || (!wantsEmail && !wantsName)) return profile;
  // Known to this instance: answered at once (the whole answer without a turn of the event loop).
  const user = userProfile(token.userId);
  const withUser = (found: Profile | null): TokenProfile => {
    if (!found) return profile;
    if (wantsEmail) {
      profile.email = found.email;
      profile.email_verified = !!found.emailVerified;
    }
    if (wantsName) profile.name = found.name;
    return profile;
  };
  return user instanceof Promise ? user.then(withUser) : withUser(user);
}

/**
 * How long one instance answers a user's e-mail address and name from memory (ADR 143): a change
 * shows on every instance within this, the bound revocations have too; at any rate one read a
 * second per user rather than one per request. A user who is gone is not kept.
 */
export const PROFILE_CACHE_MS = 1_000;
const PROFILE_CACHE_MAX_ENTRIES = 10_000;
type Profile = { email: string | null; emailVerified: Date | null; name: string | null };
const profiles = new Map<string, { profile: Profile; at: number }>();

function userProfile(userId: string): Profile | null | Promise<Profile | null> {
  const now = Date.now();
  const known = profiles.get(userId);
  if (known && now - known.at < PROFILE_CACHE_MS) return known.profile;
  return readUserProfile(userId, now);
}

async function readUserProfile(userId: string, now: number): Promise<Profile | null> {
  const profile = await db().user.findUnique({ where: { id: userId }, select: { email: true, emailVerified: true, name: true } });
  profiles.delete(userId);
  if (profile) {
    profiles.set(userId, { profile, at: now });
    while (profiles.size > PROFILE_CACHE_MAX_ENTRIES) profiles.delete(profiles.keys().next().value!);
  }
  return profile;
}

/** Tests: forget the profiles this process holds. */
export function forgetProfiles() {
  profiles.clear();
}

const notFound = () => new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } });

/** GET /api/me. */
export function apiMeResponse(request: Request): Promise<Response> | Response {
  if (!getConfig().provider) return notFound();
  if (request.method === "OPTIONS") return resourcePreflight(["GET"]);
  return corsResource(async () => {
    const token = await requireBearer(request, { resource: API_RESOURCE_PATH });
    if (request.method !== "GET" && request.method !== "HEAD") return new Response(null, { status: 405, headers: { Allow: "GET, HEAD, OPTIONS" } });
    const profile = tokenProfile(token);
    return resourceJson(profile instanceof Promise ? await profile : profile);
  });
}

/** An MCP server for one request, acting for `token`. */
/**
 * The MCP SDK's server and transport, loaded on the first request to /mcp rather than at the
 * server's start: with the schemas it brings, about 14 MB of a process's memory that a server
 * with AUTH_PROVIDER off, or without MCP clients, never uses (ADR 182). By require: synchronous.
 */
type McpSdk = {
  McpServer: typeof McpServer;
  WebStandardStreamableHTTPServerTransport: typeof WebStandardStreamableHTTPServerTransport;
};
let mcpSdk: McpSdk | null = null;
function loadMcpSdk(): McpSdk {
  if (mcpSdk) return mcpSdk;
  const load = createRequire(import.meta.url);
  const { McpServer } = load("@modelcontextprotocol/sdk/server/mcp.js") as { McpServer: typeof import("@modelcontextprotocol/sdk/server/mcp.js").McpServer };
  const { WebStandardStreamableHTTPServerTransport } = load("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js") as {
    WebStandardStreamableHTTPServerTransport: typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js").WebStandardStreamableHTTPServerTransport;
  };
  return (mcpSdk = { McpServer, WebStandardStreamableHTTPServerTransport });
}

function mcpServer(token: BearerToken): McpServer {
  const { McpServer } = loadMcpSdk();
  const server = new McpServer({ name: getConfig().siteName, version: MCP_SERVER_VERSION }, { capabilities: { tools: {} } });
  server.registerTool(
    "whoami",
    {
      title: "Who am I",
      description: "The signed-in user this connection acts for: subject, client, scopes, and e-mail and name when the scopes allow.",
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      const profile = await tokenProfile(token);
      return { content: [{ type: "text", text: JSON.stringify(profile) }], structuredContent: profile };
    },
  );
  return server;
}

/** Any method on /mcp. */
export function mcpResponse(request: Request): Promise<Response> | Response {
  if (!getConfig().provider) return notFound();
  if (request.method === "OPTIONS") return resourcePreflight(["POST", "GET", "DELETE"]);
  return corsResource(async () => {
    const token = await requireBearer(request, { resource: MCP_RESOURCE_PATH });
    if (request.method !== "POST") return new Response(null, { status: 405, headers: { Allow: "POST, OPTIONS" } });
    const server = mcpServer(token);
    const transport = new (loadMcpSdk().WebStandardStreamableHTTPServerTransport)({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const authInfo = {
        token: request.headers.get("Authorization")!.replace(/^Bearer\s+/i, ""),
        clientId: token.clientId,
        scopes: token.scopes,
        expiresAt: token.expiresAt,
        resource: new URL(token.resource),
      };
      // The answer is complete JSON (enableJsonResponse): read it whole before the server closes.
      const answer = await transport.handleRequest(request, { authInfo });
      const body = answer.body ? await answer.arrayBuffer() : null;
      return withResourceCors(new Response(body, { status: answer.status, headers: answer.headers }));
    } finally {
      await server.close();
    }
  });
}
