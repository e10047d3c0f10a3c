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
//   `token_endpoint_auth_method` `none` or `private_key_jwt` (with `jwks_uri`), no secret;
// - keeps documents in a bounded cache, for as long as Cache-Control allows within limits.
//
// The engine (app/auth/provider) calls clientMetadataForEngine(clientId) where it looks a client
// up; see that function.
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";
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
  | "client_id_mismatch";

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

/** IPv4 ranges that are not the public internet (IANA special-purpose registry and multicast). */
const BLOCKED_V4: ReadonlyArray<[string, number]> = [
  ["0.0.0.0", 8], // "this network", 0.0.0.0
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // shared address space (carrier-grade NAT)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata services live here)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.31.196.0", 24], // AS112
  ["192.52.193.0", 24], // AMT
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["192.175.48.0", 24], // AS112
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255
];

/** Inside IPv6 global unicast (2000::/3, the only block allowed), the parts that are not public. */
const BLOCKED_V6_IN_GLOBAL: ReadonlyArray<[string, number]> = [
  ["2001::", 23], // IETF protocol assignments (Teredo 2001::/32, benchmarking, ORCHID, …)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: embeds an IPv4 address that may be private
  ["2620:4f:8000::", 48], // AS112
  ["3fff::", 20], // documentation
];

const blockedV4 = new BlockList();
for (const [net, prefix] of BLOCKED_V4) blockedV4.addSubnet(net, prefix, "ipv4");
const globalV6 = new BlockList();
globalV6.addSubnet("2000::", 3, "ipv6");
const blockedV6 = new BlockList();
for (const [net, prefix] of BLOCKED_V6_IN_GLOBAL) blockedV6.addSubnet(net, prefix, "ipv6");

/**
 * True only for a public unicast address. IPv6 outside 2000::/3 (loopback ::1, unspecified ::,
 * IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, discard 100::/64, unique-local fc00::/7,
 * link-local fe80::/10, multicast ff00::/8, …) is never public.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blockedV4.check(address, "ipv4");
  if (family === 6) {
    const bare = address.split("%")[0]!; // a zone index (fe80::1%eth0) is link-local anyway
    if (isIP(bare) !== 6) return false;
    return globalV6.check(bare, "ipv6") && !blockedV6.check(bare, "ipv6");
  }
  return false;
}

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
    token_endpoint_auth_method: z.enum(["none", "private_key_jwt"]).optional(),
    jwks_uri: httpsUrl.optional(),
    grant_types: z.array(z.string().max(200)).max(20).optional(),
    response_types: z.array(z.string().max(200)).max(10).optional(),
    scope: z.string().max(1_000).optional(),
    software_id: z.string().max(200).optional(),
    software_version: z.string().max(200).optional(),
  })
  .superRefine((doc, ctx) => {
    if (doc.token_endpoint_auth_method === "private_key_jwt" && !doc.jwks_uri) {
      ctx.addIssue({ code: "custom", path: ["jwks_uri"], message: "private_key_jwt needs jwks_uri" });
    }
    if (doc.response_types && doc.response_types.some((t) => t !== "code")) {
      ctx.addIssue({ code: "custom", path: ["response_types"], message: 'only "code" is supported' });
    }
    if (doc.grant_types && !doc.grant_types.some((g) => (SUPPORTED_GRANT_TYPES as readonly string[]).includes(g))) {
      ctx.addIssue({ code: "custom", path: ["grant_types"], message: "names no supported grant type" });
    }
  });

export type ClientMetadataDocument = z.infer<typeof DocumentSchema>;

/** Fields a metadata document may never carry: it is public, so it cannot hold a shared secret. */
const FORBIDDEN_FIELDS = ["client_secret", "client_secret_expires_at"] as const;

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
  token_endpoint_auth_method: "none" | "private_key_jwt";
  jwks_uri?: string;
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
 * when none are named), response type `code`, `none` authentication unless private_key_jwt.
 */
export function clientMetadataFromDocument(doc: ClientMetadataDocument): EngineClientMetadata {
  const grants = (doc.grant_types ?? ["authorization_code"]).filter((g) => (SUPPORTED_GRANT_TYPES as readonly string[]).includes(g));
  const metadata: EngineClientMetadata = {
    client_id: doc.client_id,
    redirect_uris: [...doc.redirect_uris],
    application_type: applicationTypeOf(doc),
    token_endpoint_auth_method: doc.token_endpoint_auth_method ?? "none",
    grant_types: [...new Set(grants)],
    response_types: ["code"],
  };
  if (doc.client_name) metadata.client_name = doc.client_name;
  if (doc.post_logout_redirect_uris) metadata.post_logout_redirect_uris = [...doc.post_logout_redirect_uris];
  if (doc.jwks_uri && metadata.token_endpoint_auth_method === "private_key_jwt") metadata.jwks_uri = doc.jwks_uri;
  for (const key of ["scope", "client_uri", "logo_uri", "policy_uri", "tos_uri"] as const) {
    if (doc[key]) metadata[key] = doc[key];
  }
  return metadata;
}

// ---- Test seam ---------------------------------------------------------------------------------

export type ResolvedAddress = { address: string; family: 4 | 6 };
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

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
export type ClientMetadataDocumentTestSeam = {
  resolve?: Resolver;
  allowHttp?: boolean;
  connectTo?: (checked: ResolvedAddress) => ResolvedAddress;
  timeoutMs?: number;
  ca?: string;
};

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

const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

async function resolveChecked(hostname: string): Promise<ResolvedAddress> {
  const literal = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  const family = isIP(literal);
  let answers: ResolvedAddress[];
  if (family) {
    answers = [{ address: literal, family: family as 4 | 6 }];
  } else {
    try {
      answers = await (seam?.resolve ?? systemResolver)(hostname);
    } catch {
      throw new ClientMetadataDocumentError("unresolvable", hostname);
    }
  }
  if (answers.length === 0) throw new ClientMetadataDocumentError("unresolvable", hostname);
  // Every answer must be public: an attacker's name could list a public and a private address.
  const refused = answers.find((a) => !isPublicAddress(a.address));
  if (refused) throw new ClientMetadataDocumentError("forbidden_address", refused.address);
  return answers[0]!;
}

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
  const url = new URL(clientId);
  const secure = url.protocol === "https:";
  if (!secure && !(seam?.allowHttp && url.protocol === "http:")) throw new ClientMetadataDocumentError("invalid_url");

  const timeoutMs = seam?.timeoutMs ?? CLIENT_METADATA_DOCUMENT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const checked = await Promise.race([
    resolveChecked(url.hostname),
    new Promise<never>((_, reject) => deadline.addEventListener("abort", () => reject(new ClientMetadataDocumentError("timeout")), { once: true })),
  ]);
  const target = seam?.connectTo ? seam.connectTo(checked) : checked;
  // The connection goes to the checked address only: this lookup answers the socket's own
  // resolution (TLS still verifies the certificate for url.hostname, which is also the SNI name).
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };

  return await new Promise<Fetched>((resolve, reject) => {
    deadline.addEventListener("abort", () => reject(new ClientMetadataDocumentError("timeout")), { once: true });
    const request = (secure ? https : http).request(
      {
        protocol: url.protocol,
        host: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: { Accept: "application/json", Host: url.host, "User-Agent": "Vestibule (client metadata document fetcher)" },
        servername: isIP(url.hostname) ? undefined : url.hostname,
        ...(secure && seam?.ca ? { ca: seam.ca } : {}),
        lookup,
        agent: false,
        signal: deadline,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          response.destroy();
          return reject(new ClientMetadataDocumentError("redirect", String(status)));
        }
        if (status !== 200) {
          response.destroy();
          return reject(new ClientMetadataDocumentError("bad_status", String(status)));
        }
        const declared = Number(response.headers["content-length"]);
        if (Number.isFinite(declared) && declared > CLIENT_METADATA_DOCUMENT_MAX_BYTES) {
          response.destroy();
          return reject(new ClientMetadataDocumentError("too_large"));
        }
        const chunks: Buffer[] = [];
        let length = 0;
        response.on("data", (chunk: Buffer) => {
          length += chunk.length;
          if (length > CLIENT_METADATA_DOCUMENT_MAX_BYTES) {
            response.destroy();
            reject(new ClientMetadataDocumentError("too_large"));
            return;
          }
          chunks.push(chunk);
        });
        response.on("error", () => reject(deadline.aborted ? new ClientMetadataDocumentError("timeout") : new ClientMetadataDocumentError("network")));
        response.on("end", () => {
          let json: unknown;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            return reject(new ClientMetadataDocumentError("not_json"));
          }
          resolve({ json, cacheSeconds: cacheSecondsFrom(response.headers["cache-control"] ?? null) });
        });
      },
    );
    request.on("error", (error) =>
      reject(deadline.aborted ? new ClientMetadataDocumentError("timeout") : new ClientMetadataDocumentError("network", error.message)),
    );
    request.end();
  });
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
export async function loadClientMetadataDocument(clientId: string): Promise<ClientMetadataDocument> {
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
export async function clientMetadataForEngine(clientId: string): Promise<EngineClientMetadata | undefined> {
  if (!isClientMetadataDocumentUrl(clientId) && !(seam?.allowHttp && clientId.startsWith("http://"))) return undefined;
  return clientMetadataFromDocument(await loadClientMetadataDocument(clientId));
}
