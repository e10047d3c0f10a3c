// One parsed view of an incoming request that every core function shares: the configuration,
// the app's public origin, whether cookies are Secure, their names, and the parsed cookies.
import { selectClientAddress } from "./client-address.server";
import { getConfig, type AuthConfig } from "./config.server";
import { cookieNames, parseCookieHeader, type CookieNames } from "./cookies.server";
import { slot } from "./slot";

export type AuthRequest = {
  request: Request;
  url: URL;
  config: AuthConfig;
  /** e.g. "https://app.example.com" — from AUTH_URL, trusted forwarding headers, or the request. */
  origin: string;
  secure: boolean;
  names: CookieNames;
  cookies: Map<string, string>;
};

// One parsed view per Request: the root middleware, a page's loader and the auth core functions it
// calls each ask for it, and the URL and cookies are parsed once (a Request's URL and headers
// cannot change under it). Keyed by configuration too, for the tests that switch it mid-request.
// On the request itself, not in a WeakMap (slot.ts).
const parsed = slot<Request, AuthRequest>("authRequest");

export function authRequest(request: Request, config: AuthConfig = getConfig()): AuthRequest {
  const held = parsed.get(request);
  if (held?.config === config) return held;
  const ar = parseAuthRequest(request, config);
  parsed.set(request, ar);
  return ar;
}

function parseAuthRequest(request: Request, config: AuthConfig): AuthRequest {
  const url = new URL(request.url);
  const origin = requestOrigin(request, url, config);
  const secure = origin.startsWith("https:");
  return {
    request,
    url,
    config,
    origin,
    secure,
    names: cookieNames(secure),
    cookies: parseCookieHeader(request.headers.get("Cookie")),
  };
}

function requestOrigin(request: Request, url: URL, config: AuthConfig): string {
  if (config.origin) return config.origin;
  if (config.trustHost) {
    const host = firstHeaderValue(request.headers.get("X-Forwarded-Host"));
    const proto = firstHeaderValue(request.headers.get("X-Forwarded-Proto"));
    if (host && /^[a-z0-9.\-:[\]]+$/i.test(host)) {
      const scheme = proto === "http" || proto === "https" ? proto : url.protocol.slice(0, -1);
      return `${scheme}://${host}`.toLowerCase();
    }
  }
  return url.origin;
}

function firstHeaderValue(value: string | null): string | null {
  const first = value?.split(",")[0]?.trim();
  return first ? first : null;
}

/** The base URL of the auth endpoints, e.g. "https://app.example.com/auth". */
export function authBaseUrl(ar: AuthRequest): string {
  return ar.origin + ar.config.basePath;
}

/**
 * The client's address for rate limits, the audit trail and sessions (contract §10): the TCP
 * peer's, which the production server (and the dev plugin, scripts/dev-bootstrap.ts) writes into
 * X-Vestibule-Remote-Addr (replacing anything a client sent); with AUTH_TRUSTED_PROXIES, the
 * rightmost X-Forwarded-For entry that is not a trusted proxy (app/auth/client-address.server.ts). AUTH_TRUST_HOST has no say here.
 */
export function clientAddress(ar: AuthRequest): string | null {
  const headers = ar.request.headers;
  return selectClientAddress(headers.get("X-Vestibule-Remote-Addr"), headers.get("X-Forwarded-For"), ar.config.trustedProxies);
}
