// Protected resources: their metadata (RFC 9728) and the CORS they answer with
// (docs/features/mcp.md, docs/decisions/142-protected-resource-metadata-and-cors.md).
//
// A resource is where an access token is used: Vestibule's own AUTH_URL/api and AUTH_URL/mcp,
// and whatever AUTH_PROVIDER_RESOURCES adds. The metadata of a resource on this origin is at
// /.well-known/oauth-protected-resource<its path>; it names this issuer as its authorization
// server. The bare /.well-known/oauth-protected-resource describes the origin itself, which is a
// resource only when AUTH_PROVIDER_RESOURCES lists it; otherwise it answers 404 — then an MCP
// client that falls back to it goes on to the authorization server's own metadata rather than
// asking for a token for the whole origin, which would be refused as invalid_target.
//
// CORS: bearer resources and metadata are read by browser-based clients (the MCP Inspector, web
// apps) from other origins. They never use cookies, so any origin may read them without
// credentials (`Access-Control-Allow-Origin: *`, never `-Credentials`); nothing that reads a cookie
// answers with these headers.
import { getConfig, normalizeResource } from "../core/config.server";
import { isDatabaseUnavailable, noteDatabaseUnavailable, outageJson } from "../core/outage.server";
import { jsonTextResponse } from "../core/respond.server";
import { PROTECTED_RESOURCE_METADATA_PATH } from "./bearer.server";
import { PROVIDER_SCOPES } from "./engine.server";
import { issuerUrl } from "./signing-keys.server";

/** Metadata may be cached by clients this long (seconds). */
const METADATA_MAX_AGE = 300;

const CORS_BASE = { "Access-Control-Allow-Origin": "*", Vary: "Origin" } as const;
/** Request headers a browser client of a bearer resource (or MCP over Streamable HTTP) sends. */
const CORS_ALLOW_HEADERS = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID";
/** Response headers such a client must be able to read: the 401's challenge, MCP's session and version. */
const CORS_EXPOSE_HEADERS = "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version";

/** The headers withResourceCors sets, listed once (every bearer answer sets them). */
const CORS_ANSWER_HEADERS: readonly (readonly [string, string])[] = [...Object.entries(CORS_BASE), ["Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS]];

/** The same answer with the CORS headers of a cookie-less resource. */
export function withResourceCors(response: Response): Response {
  let headers = response.headers;
  try {
    for (const [name, value] of CORS_ANSWER_HEADERS) headers.set(name, value);
  } catch {
    // Immutable headers (a fetched Response): copy it.
    headers = new Headers(response.headers);
    for (const [name, value] of CORS_ANSWER_HEADERS) headers.set(name, value);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
  return response;
}

/** The answer to a CORS preflight (OPTIONS) for a resource allowing `methods`. */
export function resourcePreflight(methods: readonly string[]): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CORS_BASE,
      "Access-Control-Allow-Methods": [...methods, "OPTIONS"].join(", "),
      "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS,
      "Access-Control-Max-Age": "600",
    },
  });
}

/**
 * Runs a bearer-protected handler: a thrown Response (requireBearer's 401/403) is the answer, and
 * a database that cannot answer (a grant or profile read) the JSON endpoints' 503; all get CORS.
 */
export async function corsResource(handler: () => Promise<Response>): Promise<Response> {
  try {
    return withResourceCors(await handler());
  } catch (thrown) {
    if (thrown instanceof Response) return withResourceCors(thrown);
    if (isDatabaseUnavailable(thrown)) {
      noteDatabaseUnavailable(thrown, "bearer-resource");
      return withResourceCors(outageJson());
    }
    throw thrown;
  }
}

/** The metadata document for the resource at `resource` (normalised), or null when it is not one served here. */
export function protectedResourceMetadata(resource: string): Record<string, unknown> | null {
  const provider = getConfig().provider;
  if (!provider) return null;
  const issuer = issuerUrl();
  if (new URL(resource).origin !== issuer || !provider.resources.includes(resource)) return null;
  return {
    resource,
    authorization_servers: [issuer],
    // The scopes a user can be asked for: profile and email shape /api/me and whoami.
    scopes_supported: [...PROVIDER_SCOPES],
    bearer_methods_supported: ["header"],
    resource_signing_alg_values_supported: ["RS256", "ES256"],
    resource_name: getConfig().siteName,
  };
}

/** GET /.well-known/oauth-protected-resource[/<path>]: the metadata, or 404. */
export function protectedResourceMetadataResponse(request: Request): Response {
  const notFound = () => withResourceCors(new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } }));
  if (!getConfig().provider) return notFound();
  if (request.method === "OPTIONS") return resourcePreflight(["GET", "HEAD"]);
  if (request.method !== "GET" && request.method !== "HEAD") {
    return withResourceCors(new Response(null, { status: 405, headers: { Allow: "GET, HEAD, OPTIONS" } }));
  }
  const url = new URL(request.url);
  const path = url.pathname.slice(PROTECTED_RESOURCE_METADATA_PATH.length);
  if (path !== "" && !path.startsWith("/")) return notFound();
  const resource = normalizeResource(`${issuerUrl()}${path}`);
  const document = resource ? protectedResourceMetadata(resource) : null;
  if (!document) return notFound();
  const text = JSON.stringify(document);
  return withResourceCors(
    new Response(request.method === "HEAD" ? null : text, {
      headers: {
        "Content-Type": "application/json",
        "Content-Length": String(Buffer.byteLength(text)),
        "Cache-Control": `public, max-age=${METADATA_MAX_AGE}`,
      },
    }),
  );
}

/** A JSON answer of a bearer resource: never stored by a cache (it is one token's); written directly on the fast path. */
export function resourceJson(body: unknown, status = 200): Response {
  return jsonTextResponse(JSON.stringify(body), { status, noCache: true });
}
