// Every request Vestibule makes to an OAuth provider goes through here: one time budget, one
// classification of failures (timeout, network, HTTP, protocol), the discovery cache and the
// JWKS cache. Callers turn an OutboundError into a error code; the cause is logged only.
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import * as oauth from "oauth4webapi";
import { isLoopbackHost, OAUTH_CLOCK_TOLERANCE, type AuthConfig } from "../core/config.server";
import { outboundFetch } from "../core/outbound-fetch.server";

/**
 * How long outbound calls may take: each one at most `timeoutMs` (AuthConfig.oauthTimeoutMs),
 * connection to last byte, and every call still running when `deadline` fires stops there.
 */
export type OutboundBudget = { timeoutMs: number; deadline?: AbortSignal };

export function outboundBudget(config: AuthConfig, deadline?: AbortSignal): OutboundBudget {
  return deadline ? { timeoutMs: config.oauthTimeoutMs, deadline } : { timeoutMs: config.oauthTimeoutMs };
}

/** A fresh signal for one call: its own timeout, or the budget's deadline if that comes first. */
function callSignal(budget: OutboundBudget): AbortSignal {
  const own = AbortSignal.timeout(budget.timeoutMs);
  return budget.deadline ? AbortSignal.any([own, budget.deadline]) : own;
}

export type OutboundStep = "discovery" | "token" | "userinfo" | "jwks" | "refresh" | "revocation" | "introspection" | "profile";
export type OutboundFailure = "timeout" | "network" | "http" | "protocol";

export class OutboundError extends Error {
  constructor(
    readonly step: OutboundStep,
    readonly failure: OutboundFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "OutboundError";
  }
}

/** http: is allowed only towards loopback hosts (the dev IdP, tests), as for AUTH_OIDC_ISSUER. */
export function insecureAllowed(url: string | URL): boolean {
  const u = typeof url === "string" ? new URL(url) : url;
  return u.protocol === "http:" && isLoopbackHost(u.hostname);
}

/** oauth4webapi request options for a call to `url`: a fresh signal each time, through the proxy settings. */
export function requestOptions(url: string | URL | undefined, budget: OutboundBudget, headers?: Record<string, string>) {
  return {
    [oauth.customFetch]: outboundFetch,
    signal: callSignal(budget),
    headers: headers ? new Headers(headers) : undefined,
    [oauth.allowInsecureRequests]: url !== undefined && insecureAllowed(url),
  };
}

function isTimeout(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: string }).name;
    if (name === "TimeoutError" || name === "AbortError" || (e as { code?: string }).code === "UND_ERR_HEADERS_TIMEOUT") return true;
  }
  return false;
}

/** Runs one outbound call and classifies whatever it throws. */
export async function outbound<T>(step: OutboundStep, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw classify(step, error);
  }
}

export function classify(step: OutboundStep, error: unknown): OutboundError {
  if (error instanceof OutboundError) return error;
  if (isTimeout(error)) return new OutboundError(step, "timeout", "no answer within the time budget", { cause: error });
  // fetch() rejects with a TypeError ("fetch failed") for refused connections, DNS and TLS errors.
  if (error instanceof TypeError && /fetch failed|network|ECONNREFUSED|ENOTFOUND/i.test(`${error.message} ${String(error.cause ?? "")}`)) {
    return new OutboundError(step, "network", error.message, { cause: error });
  }
  if (error instanceof oauth.ResponseBodyError) {
    return new OutboundError(step, "http", `${error.status} ${error.error}${error.error_description ? `: ${error.error_description}` : ""}`, { cause: error });
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    return new OutboundError(step, "http", `${error.status} WWW-Authenticate challenge`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new OutboundError(step, "protocol", message, { cause: error });
}

/** fetch() with the same budget and classification, for provider APIs outside the protocol (GitHub's /user). */
export async function fetchJson(step: OutboundStep, url: string, budget: OutboundBudget, init: RequestInit = {}): Promise<unknown> {
  return outbound(step, async () => {
    if (new URL(url).protocol !== "https:" && !insecureAllowed(url)) throw new Error(`refusing to call ${url} over http`);
    const response = await outboundFetch(url, { ...init, redirect: "error", signal: callSignal(budget) });
    const text = await response.text();
    if (!response.ok) throw new OutboundError(step, "http", `${response.status} from ${new URL(url).pathname}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new OutboundError(step, "protocol", `${new URL(url).pathname} did not answer JSON`);
    }
  });
}

// ── Discovery ────────────────────────────────────────────────────────────────────────────────

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const discoveryCache = new Map<string, { at: number; as: Promise<oauth.AuthorizationServer>; metadata?: oauth.AuthorizationServer }>();

/**
 * The provider's metadata from `<issuer>/.well-known/openid-configuration`, cached for an hour
 * per issuer. Concurrent callers share one request; a failure is not cached. `expectedIssuer`
 * is the `issuer` the document must state (Entra's multi-tenant document says `{tenantid}`).
 */
export function discover(issuer: string, expectedIssuer: string, budget: OutboundBudget): Promise<oauth.AuthorizationServer> {
  const key = `${issuer}\u0000${expectedIssuer}`;
  const hit = discoveryCache.get(key);
  if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.as;
  const as = outbound("discovery", async () => {
    const issuerUrl = new URL(issuer);
    const response = await oauth.discoveryRequest(issuerUrl, { algorithm: "oidc", ...requestOptions(issuerUrl, budget) });
    // processDiscoveryResponse compares the document's issuer with the URL it was fetched for.
    const metadata = await oauth.processDiscoveryResponse(new URL(expectedIssuer), response);
    if (!metadata.authorization_endpoint || !metadata.token_endpoint) {
      throw new OutboundError("discovery", "protocol", "metadata lacks authorization_endpoint or token_endpoint");
    }
    return metadata;
  });
  const entry: { at: number; as: Promise<oauth.AuthorizationServer>; metadata?: oauth.AuthorizationServer } = { at: Date.now(), as };
  discoveryCache.set(key, entry);
  as.then(
    (metadata) => {
      entry.metadata = metadata;
    },
    () => {
      if (discoveryCache.get(key)?.as === as) discoveryCache.delete(key);
    },
  );
  return as;
}

/** What discover() last fetched for these arguments while still fresh; never fetches. */
export function discoveredMetadata(issuer: string, expectedIssuer: string): oauth.AuthorizationServer | undefined {
  const hit = discoveryCache.get(`${issuer}\u0000${expectedIssuer}`);
  return hit && Date.now() - hit.at < DISCOVERY_TTL_MS ? hit.metadata : undefined;
}

/** Forgets cached metadata and keys (tests point one issuer at different servers). */
export function clearOAuthCaches() {
  discoveryCache.clear();
  jwksCache.clear();
}

// ── JWKS and ID-token signatures ─────────────────────────────────────────────────────────────

type KeySet = { at: number; keys: JSONWebKeySet; refetchedFor: Map<string, number> };
const JWKS_TTL_MS = 10 * 60 * 1000;
/** An unknown `kid` triggers a refetch, but the same unknown `kid` at most once a minute. */
const UNKNOWN_KID_COOLDOWN_MS = 60 * 1000;
const jwksCache = new Map<string, KeySet>();
const jwksInFlight = new Map<string, Promise<KeySet>>();

function fetchKeySet(uri: string, budget: OutboundBudget): Promise<KeySet> {
  let pending = jwksInFlight.get(uri);
  if (!pending) {
    pending = (async () => {
      const body = await fetchJson("jwks", uri, budget, { headers: { Accept: "application/json, application/jwk-set+json" } });
      if (typeof body !== "object" || body === null || !Array.isArray((body as { keys?: unknown }).keys)) {
        throw new OutboundError("jwks", "protocol", "the JWKS document has no keys array");
      }
      const previous = jwksCache.get(uri);
      const set: KeySet = { at: Date.now(), keys: body as JSONWebKeySet, refetchedFor: previous?.refetchedFor ?? new Map() };
      jwksCache.set(uri, set);
      return set;
    })().finally(() => jwksInFlight.delete(uri));
    jwksInFlight.set(uri, pending);
  }
  return pending;
}

/** Asymmetric algorithms only: `none` and HMAC (keyed with a secret the client holds too) are refused. */
const SIGNING_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];

export type JwtExpectations = { issuer: string; audience: string; algorithms?: readonly string[] };

/**
 * Verifies a JWT's signature against the provider's JWKS and its iss/aud/exp/nbf (10 s
 * tolerance). Key rotation: when no key matches the token's `kid`, the set is fetched again
 * before giving up.
 */
export async function verifyJwtSignature(jwksUri: string, token: string, expect: JwtExpectations, budget: OutboundBudget): Promise<JWTPayload> {
  const algorithms = (expect.algorithms?.length ? expect.algorithms : SIGNING_ALGORITHMS).filter((a) => SIGNING_ALGORITHMS.includes(a));
  const options = { issuer: expect.issuer, audience: expect.audience, algorithms, clockTolerance: OAUTH_CLOCK_TOLERANCE };
  let set = jwksCache.get(jwksUri);
  if (!set || Date.now() - set.at > JWKS_TTL_MS) set = await fetchKeySet(jwksUri, budget);
  try {
    return (await jwtVerify(token, createLocalJWKSet(set.keys), options)).payload;
  } catch (error) {
    if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
    const kid = kidOf(token);
    const last = set.refetchedFor.get(kid);
    if (last !== undefined && Date.now() - last < UNKNOWN_KID_COOLDOWN_MS) throw error;
    set.refetchedFor.set(kid, Date.now());
    if (set.refetchedFor.size > 100) set.refetchedFor.clear();
    const fresh = await fetchKeySet(jwksUri, budget);
    fresh.refetchedFor.set(kid, Date.now());
    return (await jwtVerify(token, createLocalJWKSet(fresh.keys), options)).payload;
  }
}

function kidOf(token: string): string {
  try {
    const header = JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString("utf8")) as { kid?: unknown };
    return typeof header.kid === "string" ? header.kid : "";
  } catch {
    return "";
  }
}
