// Client ID metadata documents (the MCP authorization specification's way for a client to
// register: its client_id is an https: URL, and the document at that URL describes it;
// docs/decisions/140-client-id-metadata-documents.md).
//
// Fetching a URL that anyone may name is a server-side request forgery risk, so the fetch here:
// - is https: only (plain http exists only behind the test seam below, which production refuses);
// - resolves the host itself, refuses the whole answer if any address is not a public unicast
//   one (private, loopback, link-local, unique-local, shared, documentation, multicast,
//   IPv4-mapped, NAT64, 6to4, Teredo, …), then connects to the address it checked — the name is
//   not resolved a second time, so a rebinding DNS answer cannot slip in between — while TLS
//   still checks the certificate against the host name (SNI and Host carry the name);
// - follows no redirect, gives up after 5 s in all, reads at most 5 KB;
// - checks the JSON with zod: `client_id` must be the URL itself, redirect URIs well formed,
//   `token_endpoint_auth_method` `none` (a public client with PKCE), no secret, no keys (ADR 177);
// - keeps documents in a bounded cache, for as long as Cache-Control allows within limits.
//
// The engine (app/auth/provider) calls clientMetadataForEngine(clientId) where it looks a client
// up; see that function. Fetches are capped: CLIENT_METADATA_DOCUMENT_MAX_IN_FLIGHT at once in all,
// and the caller's limit per client address (beforeFetch; the adapter's OAUTH_CLIENT_DOCUMENT_CLIENT).
import { fetchPublic, isPublicAddress, PublicFetchError, type PublicFetched, type PublicFetchSeam, type ResolvedAddress, type Resolver } from "../core/public-fetch.server";
import { z } from "zod";
import { applicationTypeFor, checkRedirectUri } from "./clients.server";

/** The whole fetch (name resolution, connection, answer and body) must end within this. */
export const CLIENT_METADATA_DOCUMENT_TIMEOUT_MS = 5_000;
/** A document longer than this is refused without reading further. */
export const CLIENT_METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
/** Longest client_id URL taken as a document's address. */
export const CLIENT_METADATA_DOCUMENT_MAX_URL_LENGTH = 2_048;
/** Bounded cache: at most this many documents, each kept between MIN and MAX seconds. */
export const CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES = 500;
export const CLIENT_METADATA_DOCUMENT_CACHE_DEFAULT_SECONDS = 300;
export const CLIENT_METADATA_DOCUMENT_CACHE_MAX_SECONDS = 86_400;
/** At most this many documents being fetched at once, in this process, whoever asked (ADR 177). */
export const CLIENT_METADATA_DOCUMENT_MAX_IN_FLIGHT = 16;

/** Why a document was not accepted (logged by the caller; never shown to a visitor as-is). */
export type ClientMetadataDocumentFailure =
  | "invalid_url"
  | "forbidden_address"
  | "unresolvable"
  | "timeout"
  | "too_large"
  | "redirect"
  | "bad_status"
  | "network"
  | "not_json"
  | "invalid_document"
  | "client_id_mismatch"
  | "busy"
  | "rate_limited";

export class ClientMetadataDocumentError extends Error {
  constructor(
    readonly reason: ClientMetadataDocumentFailure,
    detail?: string,
  ) {
    super(detail ? `${reason}: ${detail}` : reason);
    this.name = "ClientMetadataDocumentError";
  }
}

// ---- Addresses ---------------------------------------------------------------------------------

// The address rule and the guarded fetch are shared with the SAML IdP metadata fetch
// (core/public-fetch.server.ts); this module keeps its own error type, limits and seam.
export { isPublicAddress };

// ---- The URL -----------------------------------------------------------------------------------

/**
 * Whether a client_id names a metadata document: an https: URL with a host, no user name or
 * password, no fragment, no "." or ".." path segment (also percent-encoded), no control or
 * space character, at most CLIENT_METADATA_DOCUMENT_MAX_URL_LENGTH characters, and written the
 * way the URL parser writes it back (so that two spellings never name one client).
 */
export function isClientMetadataDocumentUrl(clientId: string): boolean {
  if (clientId.length > CLIENT_METADATA_DOCUMENT_MAX_URL_LENGTH) return false;
  if (!/^https:\/\/[^/?#\\@\s]+\/[^#\s\\]*$/.test(clientId)) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.protocol !== "https:" || url.username || url.password || url.hash || !url.hostname) return false;
  const segments = clientId.slice(clientId.indexOf("/", "https://".length)).split("?")[0]!.split("/");
  if (segments.some((s) => /^(\.|%2e){1,2}$/i.test(s))) return false;
  return url.href === clientId;
}

// ---- The document ------------------------------------------------------------------------------

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

const httpsUrl = z
  .string()
  .max(CLIENT_METADATA_DOCUMENT_MAX_URL_LENGTH)
  .refine((v) => parseUrl(v)?.protocol === "https:", { message: "must be an https: URL" });

/** A redirect URI as any client may register one here (clients.server.ts checkRedirectUri): one rule for every kind of client. */
const redirectUri = z
  .string()
  .max(CLIENT_METADATA_DOCUMENT_MAX_URL_LENGTH)
  .refine(
    (v) => {
      try {
        checkRedirectUri(v);
        return true;
      } catch {
        return false;
      }
    },
    { message: "must be an https: URL, an http: loopback URL or a private-use scheme, without a fragment" },
  );

/** The grant types a document's client may use here (others it names are dropped). */
const SUPPORTED_GRANT_TYPES = ["authorization_code", "refresh_token"] as const;

const DocumentSchema = z
  .object({
    client_id: z.string(),
    client_name: z.string().trim().min(1).max(200).optional(),
    redirect_uris: z.array(redirectUri).min(1).max(20),
    post_logout_redirect_uris: z.array(redirectUri).max(20).optional(),
    client_uri: httpsUrl.optional(),
    logo_uri: httpsUrl.optional(),
    policy_uri: httpsUrl.optional(),
    tos_uri: httpsUrl.optional(),
    application_type: z.enum(["web", "native"]).optional(),
    // A document's client is public (PKCE only, ADR 177): anyone can publish a document, so a
    // client that authenticates by it is anyone — and private_key_jwt would have the engine fetch
    // a jwks_uri the document names, outside the SSRF guard.
    token_endpoint_auth_method: z.literal("none", { message: "only none: a metadata document describes a public client (PKCE)" }).optional(),
    grant_types: z.array(z.string().max(200)).max(20).optional(),
    response_types: z.array(z.string().max(200)).max(10).optional(),
    scope: z.string().max(1_000).optional(),
    software_id: z.string().max(200).optional(),
    software_version: z.string().max(200).optional(),
  })
  .superRefine((doc, ctx) => {
    if (doc.response_types && doc.response_types.some((t) => t !== "code")) {
      ctx.addIssue({ code: "custom", path: ["response_types"], message: 'only "code" is supported' });
    }
    if (doc.grant_types && !doc.grant_types.some((g) => (SUPPORTED_GRANT_TYPES as readonly string[]).includes(g))) {
      ctx.addIssue({ code: "custom", path: ["grant_types"], message: "names no supported grant type" });
    }
  });

export type ClientMetadataDocument = z.infer<typeof DocumentSchema>;

/** Fields a metadata document may never carry: it is public, so it holds no shared secret, and its client authenticates with no key (ADR 177). */
const FORBIDDEN_FIELDS = ["client_secret", "client_secret_expires_at", "jwks_uri", "jwks"] as const;

/** Checks a fetched body (already parsed JSON) as the document published at `url`. */
export function parseClientMetadataDocument(url: string, json: unknown): ClientMetadataDocument {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new ClientMetadataDocumentError("invalid_document", "not a JSON object");
  }
  for (const field of FORBIDDEN_FIELDS) {
    if (field in json) throw new ClientMetadataDocumentError("invalid_document", `${field} is not allowed`);
  }
  // Compared as strings, before anything else: a document for another URL is not this client's.
  if ((json as { client_id?: unknown }).client_id !== url) {
    throw new ClientMetadataDocumentError("client_id_mismatch");
  }
  const parsed = DocumentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ClientMetadataDocumentError("invalid_document", `${issue.path.join(".")}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * "native" when every redirect URI is a loopback or private-use one (a command-line tool or
 * desktop app: the engine then lets a loopback redirect use any port), whatever the document says
 * or leaves out, or when it says so; else "web" — the rule every client here follows
 * (clients.server.ts applicationTypeFor).
 */
export function applicationTypeOf(doc: Pick<ClientMetadataDocument, "application_type" | "redirect_uris">): "web" | "native" {
  return applicationTypeFor(doc.redirect_uris, doc.application_type);
}

/** Client metadata in the engine's terms (RFC 7591 names, what oidc-provider's Client takes). */
export type EngineClientMetadata = {
  client_id: string;
  client_name?: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  application_type: "web" | "native";
  token_endpoint_auth_method: "none";
  grant_types: string[];
  response_types: ["code"];
  scope?: string;
  client_uri?: string;
  logo_uri?: string;
  policy_uri?: string;
  tos_uri?: string;
};

/**
 * The engine's client metadata for a checked document: application_type as applicationTypeOf()
 * says, grant types narrowed to those supported here (RFC 7591's default, authorization_code,
 * when none are named), response type `code`, `none` authentication.
 */
export function clientMetadataFromDocument(doc: ClientMetadataDocument): EngineClientMetadata {
  const grants = (doc.grant_types ?? ["authorization_code"]).filter((g) => (SUPPORTED_GRANT_TYPES as readonly string[]).includes(g));
  const metadata: EngineClientMetadata = {
    client_id: doc.client_id,
    redirect_uris: [...doc.redirect_uris],
    application_type: applicationTypeOf(doc),
    token_endpoint_auth_method: "none",
    grant_types: [...new Set(grants)],
    response_types: ["code"],
  };
  if (doc.client_name) metadata.client_name = doc.client_name;
  if (doc.post_logout_redirect_uris) metadata.post_logout_redirect_uris = [...doc.post_logout_redirect_uris];
  for (const key of ["scope", "client_uri", "logo_uri", "policy_uri", "tos_uri"] as const) {
    if (doc[key]) metadata[key] = doc[key];
  }
  return metadata;
}

// ---- Test seam ---------------------------------------------------------------------------------

export type { ResolvedAddress, Resolver };

/**
 * What tests may change, and only outside production (setClientMetadataDocumentTestSeam throws
 * when NODE_ENV is "production"):
 * - `resolve`: a fake name resolver (its answers are still checked by isPublicAddress);
 * - `allowHttp`: fetch http: URLs too (local test servers have no certificate);
 * - `connectTo`: where to open the connection for a checked address (tests point every public
 *   address at their local server; the check has already passed on the address resolved);
 * - `timeoutMs`: a shorter deadline than 5 s, so a slow-body test ends soon;
 * - `ca`: the certificate authority trusted instead of the system's (a local https: server's test CA).
 */
export type ClientMetadataDocumentTestSeam = PublicFetchSeam;

let seam: ClientMetadataDocumentTestSeam | null = null;

export function setClientMetadataDocumentTestSeam(next: ClientMetadataDocumentTestSeam | null) {
  if (next && process.env.NODE_ENV === "production") {
    throw new Error("The client metadata document test seam is not available in production");
  }
  seam = next;
  cache.clear();
  pending.clear();
}

// ---- Fetching ----------------------------------------------------------------------------------

type Fetched = { json: unknown; cacheSeconds: number };

/** Seconds a document may be kept: its max-age, at most the cap; none for no-store, no-cache or max-age=0; the default without a max-age. */
export function cacheSecondsFrom(cacheControl: string | null): number {
  if (!cacheControl) return CLIENT_METADATA_DOCUMENT_CACHE_DEFAULT_SECONDS;
  const directives = cacheControl.toLowerCase().split(",").map((d) => d.trim());
  if (directives.some((d) => d === "no-store" || d === "no-cache")) return 0;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)).find(Boolean);
  if (!maxAge) return CLIENT_METADATA_DOCUMENT_CACHE_DEFAULT_SECONDS;
  return Math.min(Number(maxAge[1]), CLIENT_METADATA_DOCUMENT_CACHE_MAX_SECONDS);
}

async function fetchDocument(clientId: string): Promise<Fetched> {
  let fetched: PublicFetched;
  try {
    fetched = await fetchPublic(clientId, {
      maxBytes: CLIENT_METADATA_DOCUMENT_MAX_BYTES,
      timeoutMs: CLIENT_METADATA_DOCUMENT_TIMEOUT_MS,
      accept: "application/json",
      userAgent: "Vestibule (client metadata document fetcher)",
      seam,
    });
  } catch (error) {
    if (error instanceof PublicFetchError) throw new ClientMetadataDocumentError(error.reason, error.message.includes(": ") ? error.message.slice(error.message.indexOf(": ") + 2) : undefined);
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(fetched.body.toString("utf8"));
  } catch {
    throw new ClientMetadataDocumentError("not_json");
  }
  return { json, cacheSeconds: cacheSecondsFrom(fetched.cacheControl) };
}

// ---- Cache -------------------------------------------------------------------------------------

type Entry = { doc: ClientMetadataDocument; expiresAt: number };
/** Insertion order is use order (a hit moves its entry to the end): the first key is the oldest used. */
const cache = new Map<string, Entry>();
/** One fetch per URL at a time: concurrent lookups of one document share it. */
const pending = new Map<string, Promise<ClientMetadataDocument>>();

function remember(clientId: string, doc: ClientMetadataDocument, seconds: number) {
  if (seconds <= 0) return;
  cache.delete(clientId);
  cache.set(clientId, { doc, expiresAt: Date.now() + seconds * 1000 });
  while (cache.size > CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
}

/** How many documents the cache holds (tests). */
export function clientMetadataDocumentCacheSize(): number {
  return cache.size;
}

/**
 * The checked document published at `clientId`, from the cache or fetched. Throws
 * ClientMetadataDocumentError (its `reason` says why) for anything not accepted; failures are not
 * cached.
 */
export async function loadClientMetadataDocument(clientId: string, beforeFetch?: () => Promise<void>): Promise<ClientMetadataDocument> {
  const testHttp = seam?.allowHttp && /^http:\/\//.test(clientId) && isClientMetadataDocumentUrl(`https${clientId.slice(4)}`);
  if (!isClientMetadataDocumentUrl(clientId) && !testHttp) throw new ClientMetadataDocumentError("invalid_url");
  const hit = cache.get(clientId);
  if (hit) {
    cache.delete(clientId);
    if (hit.expiresAt > Date.now()) {
      cache.set(clientId, hit);
      return hit.doc;
    }
  }
  let request = pending.get(clientId);
  if (!request) {
    // Too many fetches under way already: refused rather than queued, so a flood of URLs holds no more than this many sockets.
    if (pending.size >= CLIENT_METADATA_DOCUMENT_MAX_IN_FLIGHT) throw new ClientMetadataDocumentError("busy");
    // The caller's own limit (per client address): throws to refuse. Others may have started
    // fetches meanwhile: the cap is checked again.
    if (beforeFetch) {
      await beforeFetch();
      request = pending.get(clientId);
      if (!request && pending.size >= CLIENT_METADATA_DOCUMENT_MAX_IN_FLIGHT) throw new ClientMetadataDocumentError("busy");
    }
  }
  if (!request) {
    request = fetchDocument(clientId).then(({ json, cacheSeconds }) => {
      const doc = parseClientMetadataDocument(clientId, json);
      remember(clientId, doc, cacheSeconds);
      return doc;
    });
    pending.set(clientId, request);
    const clear = () => {
      if (pending.get(clientId) === request) pending.delete(clientId);
    };
    request.then(clear, clear);
  }
  return request;
}

/**
 * For the engine's client lookup (the adapter's `Client.find(id)`): the client metadata of the
 * metadata document `clientId` names, or undefined when `clientId` is not a document URL (then
 * it is an ordinary registered client id). A document that cannot be fetched or is not valid
 * throws ClientMetadataDocumentError; the engine answers that as an unknown client
 * (`invalid_client`, and an error page rather than a redirect at the authorization endpoint).
 */
export async function clientMetadataForEngine(clientId: string, beforeFetch?: () => Promise<void>): Promise<EngineClientMetadata | undefined> {
  if (!isClientMetadataDocumentUrl(clientId) && !(seam?.allowHttp && clientId.startsWith("http://"))) return undefined;
  return clientMetadataFromDocument(await loadClientMetadataDocument(clientId, beforeFetch));
}
