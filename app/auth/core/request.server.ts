// One parsed view of an incoming request that every core function shares: the configuration,
// the app's public origin, whether cookies are Secure, their names, and the parsed cookies.
import { selectClientAddress } from "./client-address.server";
import { getConfig, isHostValue, type AuthConfig } from "./config.server";
import { cookieNames, parseCookieHeader, type CookieNames } from "./cookies.server";
import { slot } from "./slot";

export type AuthRequest = {
  request: Request;
  url: URL;
  config: AuthConfig;
  /** e.g. "https://app.example.com" — from AUTH_URL, trusted forwarding headers, or the request. */
  origin: string;
  /**
   * The host the request named (X-Forwarded-Host with AUTH_TRUST_HOST, else its own Host) when
   * AUTH_ALLOWED_HOSTS does not list it; null when the request may be served. `origin` never
   * holds it: the root middleware answers such a request 400 UntrustedHost (untrustedHostRefusal).
   */
  untrustedHost: string | null;
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
  const { origin, untrustedHost } = requestOrigin(request, url, config);
  const secure = origin.startsWith("https:");
  return {
    request,
    url,
    config,
    origin,
    untrustedHost,
    secure,
    names: cookieNames(secure),
    cookies: parseCookieHeader(request.headers.get("Cookie")),
  };
}

// The origin links and redirects are built on (docs/decisions/105): AUTH_URL when set, whatever
// the headers say. Otherwise the request's: with AUTH_TRUST_HOST the proxy's X-Forwarded-Host and
// -Proto, else the request's own Host; and with AUTH_ALLOWED_HOSTS that host must be listed. A host
// that is not (a forged header, a request that reached the instance under another name) is kept
// aside as `untrustedHost` and the origin falls back to the first listed host, so that nothing
// built before the refusal can name it.
function requestOrigin(request: Request, url: URL, config: AuthConfig): { origin: string; untrustedHost: string | null } {
  if (config.origin) return { origin: config.origin, untrustedHost: null };
  let scheme = url.protocol.slice(0, -1);
  let host = url.host.toLowerCase();
  if (config.trustHost) {
    const forwarded = firstHeaderValue(request.headers.get("X-Forwarded-Host"))?.toLowerCase();
    const proto = firstHeaderValue(request.headers.get("X-Forwarded-Proto"));
    if (proto === "http" || proto === "https") scheme = proto;
    if (forwarded !== undefined && (config.allowedHosts || isHostValue(forwarded))) host = forwarded;
  }
  if (config.allowedHosts && !hostAllowed(host, config.allowedHosts)) {
    return { origin: `${scheme}://${config.allowedHosts[0]}`, untrustedHost: host };
  }
  return { origin: `${scheme}://${host}`, untrustedHost: null };
}

/** An entry "name" allows that name on any port; "name:port" that port only. */
function hostAllowed(host: string, allowed: readonly string[]): boolean {
  if (!isHostValue(host)) return false;
  if (allowed.includes(host)) return true;
  const name = host.replace(/:\d+$/, "");
  return name !== host && allowed.includes(name);
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
 * The client's address for rate limits, the audit trail and sessions: the TCP
 * peer's, which the production server (and the dev plugin, scripts/dev-bootstrap.ts) writes into
 * X-Vestibule-Remote-Addr (replacing anything a client sent); with AUTH_TRUSTED_PROXIES, the
 * rightmost X-Forwarded-For entry that is not a trusted proxy (app/auth/client-address.server.ts). AUTH_TRUST_HOST has no say here.
 */
export function clientAddress(ar: AuthRequest): string | null {
  const headers = ar.request.headers;
  return selectClientAddress(headers.get("X-Vestibule-Remote-Addr"), headers.get("X-Forwarded-For"), ar.config.trustedProxies);
}
