// requireBearer: what an app route calls to accept Vestibule's access tokens (RFC 6750 bearer
// tokens that are RFC 9068 JWTs), docs/features/mcp.md and docs/decisions/141-bearer-tokens.md.
//
// A token passes when its signature verifies with one of the provider's published keys (a key
// rotated out still verifies until the tokens it signed have expired: signing-keys.server.ts),
// `typ` is `at+jwt`, `iss` is the issuer, `exp`/`nbf`/`iat` hold within a small skew, `aud` names
// this resource (RFC 8707: a token for one resource is refused by every other), it carries the
// scopes asked for, and nothing revoked it: its user still has a grant for its client (or the
// grant it names still exists), and its user is not under a "sign out everywhere", disable or
// delete cut-off. Otherwise the answer is
// `401` with `WWW-Authenticate: Bearer … resource_metadata="…"` (RFC 9728), or `403`
// `insufficient_scope`, as JSON (RFC 6750's error object) — a bearer client reads JSON, and a
// browser reaching such a URL gets the same small document.
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { db } from "../../db/client.server";
import { userOfPairwiseSubject } from "./pairwise.server";
import { getConfig, normalizeResource, OAUTH_CLOCK_TOLERANCE } from "../core/config.server";
import { endedInDatabase, isRevoked, revocationsComplete, revocationsReady } from "../core/revocation.server";
import { NO_CACHE_HEADERS } from "../core/respond.server";
import { currentKeyStates, issuerUrl, publicJwks, SIGNING_ALGORITHMS } from "./signing-keys.server";

/** The header media type of an RFC 9068 access token. */
export const ACCESS_TOKEN_TYPE = "at+jwt";
/**
 * The claim naming the grant a token was issued from, when the engine adds it (extraTokenClaims):
 * then that grant is checked exactly; without it, whether the user has any grant for the client.
 */
export const GRANT_ID_CLAIM = "gid";
/** The engine's storage kind for grants (adapter.server.ts keeps each model under its name). */
const GRANT_KIND = "Grant";
/** How long one instance trusts a grant it found live before asking the database again. */
export const GRANT_CHECK_MS = 1_000;
const GRANT_CHECK_MAX_ENTRIES = 10_000;
/** Where a resource's metadata lives, before the resource's path (RFC 9728 section 3.1). */
export const PROTECTED_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

export type BearerOptions = {
  /**
   * The resource this route belongs to: an absolute URL, or a path under AUTH_URL ("/api").
   * Default: AUTH_URL plus the request path's first segment (`/api/me` → `<AUTH_URL>/api`).
   */
  resource?: string;
  /** Scopes the token must carry, all of them. */
  scopes?: readonly string[];
};

export type BearerToken = {
  /** The token's subject: a user (public or pairwise identifier) or, for client credentials, the client. */
  sub: string;
  clientId: string;
  scopes: string[];
  /** The resource the token is for (normalised). */
  resource: string;
  /** The Vestibule user the token acts for, when it acts for one (from its grant, else its public `sub`). */
  userId: string | null;
  grantId: string | null;
  expiresAt: number;
  claims: JWTPayload;
};

/** Resources as routes name them, normalised once (a route names its resource with a constant). */
const normalizedResources = new Map<string, string>();
const NORMALIZED_RESOURCES_KEPT = 256;

/** A resource URL from `resource` (absolute, or a path under the issuer), normalised; or the request's default. */
export function resourceFor(request: Request, resource?: string): string {
  const issuer = issuerUrl();
  let raw = resource;
  if (!raw) {
    const first = new URL(request.url).pathname.split("/")[1] ?? "";
    raw = first ? `${issuer}/${first}` : issuer;
  } else if (raw.startsWith("/")) {
    raw = `${issuer}${raw}`;
  }
  const known = normalizedResources.get(raw);
  if (known) return known;
  const normalized = normalizeResource(raw);
  if (!normalized) throw new Error(`requireBearer: "${resource}" is not a resource URL`);
  if (normalizedResources.size < NORMALIZED_RESOURCES_KEPT) normalizedResources.set(raw, normalized);
  return normalized;
}

/** RFC 9728 section 3.1: the metadata URL of a resource, /.well-known/oauth-protected-resource inserted before its path. */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === "/" ? "" : url.pathname;
  return `${url.origin}${PROTECTED_RESOURCE_METADATA_PATH}${path}${url.search}`;
}

type Refusal = { status: 401 | 403; error?: "invalid_token" | "invalid_request" | "insufficient_scope"; description?: string; scope?: string };

const quoted = (value: string) => `"${value.replace(/[\\"]/g, "\\$&")}"`;

/** The 401/403 answer: WWW-Authenticate with the metadata URL, and RFC 6750's error as JSON. */
export function bearerRefusal(resource: string, refusal: Refusal): Response {
  const params: string[] = [];
  if (refusal.error) params.push(`error=${quoted(refusal.error)}`);
  if (refusal.description) params.push(`error_description=${quoted(refusal.description)}`);
  if (refusal.scope) params.push(`scope=${quoted(refusal.scope)}`);
  params.push(`resource_metadata=${quoted(resourceMetadataUrl(resource))}`);
  const body = refusal.error ? { error: refusal.error, ...(refusal.description ? { error_description: refusal.description } : {}) } : { error: "invalid_token", error_description: "No access token" };
  const text = JSON.stringify(body);
  return new Response(text, {
    status: refusal.status,
    headers: {
      "Content-Type": "application/json",
      "Content-Length": String(Buffer.byteLength(text)),
      "WWW-Authenticate": `Bearer ${params.join(", ")}`,
      ...NO_CACHE_HEADERS,
    },
  });
}

// ---- Keys ----------------------------------------------------------------------------------------

type KeySet = { read: Promise<unknown>; states: unknown; text: string; getKey: JWTVerifyGetKey };
let keySet: KeySet | null = null;

/**
 * The verifier's key set: made again only when the provider's published keys change (it re-reads
 * them every KEY_REREAD_SECONDS; the same keys read again keep this set, and the tokens verified
 * with it). While the keys read are the ones this set was made from, it is the answer at once,
 * without waiting a turn for a promise already settled (every bearer request asks).
 */
function verificationKeys(): KeySet | Promise<KeySet> {
  const read = currentKeyStates();
  if (keySet?.read === read) return keySet;
  return verificationKeysOf(read);
}

async function verificationKeysOf(read: Promise<unknown>): Promise<KeySet> {
  const states = await read;
  if (keySet && keySet.states === states) return (keySet = { ...keySet, read });
  const jwks = await publicJwks();
  const text = JSON.stringify(jwks);
  if (keySet && keySet.text === text) {
    keySet = { ...keySet, read, states };
  } else {
    keySet = { read, states, text, getKey: createLocalJWKSet(jwks) };
    verified.clear();
  }
  return keySet;
}

/**
 * Tokens whose signature and claims were verified, with the key set that verified them: a client
 * sends the same token until it expires, and checking a signature is most of a request's cost
 * (ADR 141). Only the exact same token string hits; `exp` is checked again at every use, and a
 * change of the published keys empties it. Revocation and audience are checked every time.
 */
const verified = new Map<string, { claims: JWTPayload; keys: string; audiences: (string | null)[] }>();
export const VERIFIED_TOKENS_KEPT = 2_000;

type Verified = { claims: JWTPayload; audiences: (string | null)[] };

/**
 * The token's claims, and its audiences normalised as resources compare. A token verified before
 * with the keys in use is answered at once (no turn of the event loop): every request of a client
 * that holds it asks, and each await is a promise and a turn more than the cookie session's answer.
 */
function verifiedClaims(token: string, issuer: string): Verified | Promise<Verified> {
  const known = verificationKeys();
  if (!(known instanceof Promise)) {
    const hit = verifiedHit(token, known, issuer);
    if (hit) return hit;
  }
  return verifyToken(token, issuer, known);
}

function verifiedHit(token: string, keys: KeySet, issuer: string): Verified | null {
  const hit = verified.get(token);
  if (hit && hit.keys === keys.text && hit.claims.iss === issuer && hit.claims.exp! + OAUTH_CLOCK_TOLERANCE > Date.now() / 1000) return hit;
  if (hit) verified.delete(token);
  return null;
}

async function verifyToken(token: string, issuer: string, known: KeySet | Promise<KeySet>): Promise<Verified> {
  const keys = await known;
  const hit = verifiedHit(token, keys, issuer);
  if (hit) return hit;
  const { payload } = await jwtVerify(token, keys.getKey, {
    issuer,
    typ: ACCESS_TOKEN_TYPE,
    algorithms: [...SIGNING_ALGORITHMS],
    clockTolerance: OAUTH_CLOCK_TOLERANCE,
    requiredClaims: ["exp", "iat", "sub", "client_id", "jti", "aud"],
  });
  const entry = { claims: payload, keys: keys.text, audiences: audiencesOf(payload).map(normalizeResource) };
  verified.set(token, entry);
  while (verified.size > VERIFIED_TOKENS_KEPT) verified.delete(verified.keys().next().value!);
  return entry;
}

// ---- Grants ------------------------------------------------------------------------------------

const grants = new Map<string, { accountId: string | null; live: boolean; checkedAt: number }>();

type GrantState = { live: boolean; accountId: string | null };

/** Whether the grant still exists (the engine deletes a revoked one), and its user; asked again after GRANT_CHECK_MS (known: at once). */
function grantState(grantId: string, now: number): GrantState | Promise<GrantState> {
  const known = grants.get(grantId);
  if (known && (!known.live || now - known.checkedAt < GRANT_CHECK_MS)) return known;
  return readGrantState(grantId, now);
}

async function readGrantState(grantId: string, now: number): Promise<GrantState> {
  const row = await db().oAuthPayload.findUnique({
    where: { kind_id: { kind: GRANT_KIND, id: grantId } },
    select: { accountId: true, expiresAt: true, consumedAt: true },
  });
  const live = !!row && !row.consumedAt && (!row.expiresAt || row.expiresAt.getTime() > now);
  const state = { live, accountId: row?.accountId ?? null, checkedAt: now };
  grants.delete(grantId);
  grants.set(grantId, state);
  while (grants.size > GRANT_CHECK_MAX_ENTRIES) grants.delete(grants.keys().next().value!);
  return state;
}

const clientGrants = new Map<string, { live: boolean; checkedAt: number }>();

/**
 * Whether the user still has a grant for the client (a token naming no grant: the engine's own,
 * whose claims carry none; "Remove access" and a client's removal delete every grant of the pair).
 * Asked again after GRANT_CHECK_MS, found or not.
 */
function pairHasGrant(accountId: string, clientId: string, now: number): boolean | Promise<boolean> {
  const key = `${accountId}\n${clientId}`;
  const known = clientGrants.get(key);
  if (known && now - known.checkedAt < GRANT_CHECK_MS) return known.live;
  return readPairHasGrant(key, accountId, clientId, now);
}

async function readPairHasGrant(key: string, accountId: string, clientId: string, now: number): Promise<boolean> {
  const row = await db().oAuthPayload.findFirst({
    where: { kind: GRANT_KIND, accountId, clientId, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date(now) } }] },
    select: { id: true },
  });
  clientGrants.delete(key);
  clientGrants.set(key, { live: !!row, checkedAt: now });
  while (clientGrants.size > GRANT_CHECK_MAX_ENTRIES) clientGrants.delete(clientGrants.keys().next().value!);
  return !!row;
}

/** Tests: forget what this process knows of grants. */
export function forgetGrantChecks() {
  grants.clear();
  clientGrants.clear();
  verified.clear();
  keySet = null;
}

/** Whether the user's tokens issued at `issuedAtMs` fall under an ended-sessions cut-off (sign out everywhere, disable, delete); from the list in memory at once when it is whole. */
function userCutOff(userId: string, issuedAtMs: number): boolean | Promise<boolean> {
  if (!revocationsReady() && revocationsComplete()) return isRevoked(null, userId, issuedAtMs);
  return readUserCutOff(userId, issuedAtMs);
}

async function readUserCutOff(userId: string, issuedAtMs: number): Promise<boolean> {
  const loading = revocationsReady();
  if (loading) await loading;
  return revocationsComplete() ? isRevoked(null, userId, issuedAtMs) : await endedInDatabase(null, userId, issuedAtMs, { failClosed: true });
}

// ---- The check ---------------------------------------------------------------------------------

/** The bearer token of the Authorization header; null without one; "malformed" for another shape. */
function bearerOf(request: Request): string | null | "malformed" {
  const header = request.headers.get("Authorization");
  if (!header) return null;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  return match ? match[1]! : "malformed";
}

const scopesOf = (claims: JWTPayload) => (typeof claims.scope === "string" ? claims.scope.split(" ").filter(Boolean) : []);
const audiencesOf = (claims: JWTPayload) => (Array.isArray(claims.aud) ? claims.aud : typeof claims.aud === "string" ? [claims.aud] : []);

/**
 * The access token of `request` checked for `options.resource` and `options.scopes`, or a thrown
 * Response (401 or 403, see bearerRefusal) that a loader or action lets through as its answer.
 * Off (AUTH_PROVIDER unset), every caller answers 404.
 */
export async function requireBearer(request: Request, options: BearerOptions = {}): Promise<BearerToken> {
  if (!getConfig().provider) throw new Response("Not Found", { status: 404 });
  const resource = resourceFor(request, options.resource);
  const token = bearerOf(request);
  if (token === null) throw bearerRefusal(resource, { status: 401 });
  if (token === "malformed") throw bearerRefusal(resource, { status: 401, error: "invalid_request", description: "Malformed Authorization header" });

  const issuer = issuerUrl();
  let claims: JWTPayload;
  let audiences: (string | null)[];
  try {
    const found = verifiedClaims(token, issuer);
    ({ claims, audiences } = found instanceof Promise ? await found : found);
  } catch (error) {
    const description = error instanceof joseErrors.JWTExpired ? "The access token expired" : "The access token is not valid";
    throw bearerRefusal(resource, { status: 401, error: "invalid_token", description });
  }
  if (!audiences.includes(resource)) {
    throw bearerRefusal(resource, { status: 401, error: "invalid_token", description: "The access token is for another resource" });
  }

  const now = Date.now();
  const grantId = typeof claims[GRANT_ID_CLAIM] === "string" ? (claims[GRANT_ID_CLAIM] as string) : null;
  const sub = claims.sub!;
  const clientId = String(claims.client_id);
  let userId: string | null = null;
  if (grantId) {
    const state = grantState(grantId, now);
    const grant = state instanceof Promise ? await state : state;
    if (!grant.live) throw bearerRefusal(resource, { status: 401, error: "invalid_token", description: "The access token was revoked" });
    userId = grant.accountId;
  } else if (sub !== clientId) {
    // A user's subject is their id, or a pairwise one mapped back (ADR 163); a client credentials
    // token's subject is the client and has no grant. A user's token lives as long as the user has
    // a grant for its client.
    userId = getConfig().provider!.subject === "pairwise" ? ((await userOfPairwiseSubject(sub)) ?? sub) : sub;
    const has = pairHasGrant(userId, clientId, now);
    if (!(has instanceof Promise ? await has : has)) throw bearerRefusal(resource, { status: 401, error: "invalid_token", description: "The access token was revoked" });
  }
  const cutOff = userId ? userCutOff(userId, claims.iat! * 1000) : false;
  if (cutOff instanceof Promise ? await cutOff : cutOff) {
    throw bearerRefusal(resource, { status: 401, error: "invalid_token", description: "The access token was revoked" });
  }

  const scopes = scopesOf(claims);
  const missing = (options.scopes ?? []).filter((s) => !scopes.includes(s));
  if (missing.length) {
    throw bearerRefusal(resource, { status: 403, error: "insufficient_scope", description: "The access token lacks a scope", scope: [...new Set([...scopes, ...(options.scopes ?? [])])].join(" ") });
  }
  return { sub, clientId, scopes, resource, userId, grantId, expiresAt: claims.exp!, claims };
}
