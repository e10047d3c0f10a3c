// The response headers that keep pages and answers from being framed, sniffed, leaked through
// the Referer or run scripts nobody wrote (docs/decisions/037-csp-and-origin.md).
// Every value lives here; the app shell (app/root.tsx: every answer React Router gives,
// app/entry.server.tsx: the Content-Security-Policy of each page) and server/main.ts (its own
// answers and the static assets) only apply them.
import { randomBytes } from "node:crypto";
import { BASE_PATH, type AuthConfig } from "./config.server";
import { copyResponse } from "./respond.server";

/** One year: browsers keep using https for the host that long after the last visit. */
const HSTS_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;

/**
 * What every answer carries, pages and JSON alike: no MIME sniffing, the Referer only towards
 * ourselves, no framing, a browsing context of our own, and, when AUTH_URL is https, HSTS.
 */
const baseHeaders = new WeakMap<AuthConfig, Readonly<Record<string, string>>>();

export function baseSecurityHeaders(config: AuthConfig): Readonly<Record<string, string>> {
  let held = baseHeaders.get(config);
  if (!held) {
    held = Object.freeze(buildBaseSecurityHeaders(config));
    baseHeaders.set(config, held);
  }
  return held;
}

function buildBaseSecurityHeaders(config: AuthConfig): Record<string, string> {
  const headers: Record<string, string> = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
  };
  // Only an https AUTH_URL says the deployment is https; a request's own scheme (or a forwarded
  // one) is not the operator's word, and HSTS on a plain-http host would lock its users out.
  // includeSubDomains unless AUTH_HSTS_SUBDOMAINS=false: a sibling host still on plain http
  // could otherwise set cookies for ours (docs/decisions/073-headers-and-csp-reports.md).
  if (config.origin?.startsWith("https:")) {
    headers["Strict-Transport-Security"] = `max-age=${HSTS_MAX_AGE_SECONDS}${config.hstsSubdomains ? "; includeSubDomains" : ""}`;
  }
  return headers;
}

/** A fresh nonce for one page's scripts: 128 random bits, base64. */
export function createScriptNonce(): string {
  return randomBytes(16).toString("base64");
}

/** Where browsers send the pages' CSP violation reports (POST, app/auth/core/csp-report.server.ts). */
export const CSP_REPORT_PATH = `${BASE_PATH}/csp-report`;
/** The Reporting API's name for that endpoint, in Reporting-Endpoints and the CSP's report-to. */
const CSP_REPORT_GROUP = "csp";

/**
 * Reporting-Endpoints for a page: browsers with the Reporting API read report-to's group from it;
 * the others use report-uri. A path, resolved against the page's own URL.
 */
export const REPORTING_ENDPOINTS = `${CSP_REPORT_GROUP}="${CSP_REPORT_PATH}"`;

/**
 * What every answer that ends this browser's own session carries (sign-out, revoking the current
 * session or all of them): the browser drops its HTTP cache and its storage for our origin, so a
 * page of the account seen before is not shown again from the cache on a shared computer.
 * Not "cookies": the answer deletes its own cookies by name, and "cookies" would also drop the
 * CSRF and callback-url cookies this very answer sets (docs/decisions/073).
 */
export const SIGNED_OUT_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "Clear-Site-Data": '"cache", "storage"' });

/**
 * The page's policy: scripts only from us or carrying this response's nonce (never
 * 'unsafe-inline'), no plugins, no <base>, no framing, and forms sent only to us or on to the
 * providers' authorization endpoints (browsers apply form-action to the redirects that follow a
 * form submission, so the sign-in POST's redirect to the provider must be allowed).
 */
export function contentSecurityPolicy(nonce: string, formActionOrigins: readonly string[]): string {
  const formAction = ["'self'", ...new Set(formActionOrigins)].join(" ");
  return [
    `script-src 'self' 'nonce-${nonce}'`,
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    `form-action ${formAction}`,
    `report-uri ${CSP_REPORT_PATH}`,
    `report-to ${CSP_REPORT_GROUP}`,
  ].join("; ");
}

/** Sets `values` on `response`, copying it first when its headers are immutable. */
export function withHeaders(response: Response, values: Readonly<Record<string, string>>): Response {
  try {
    for (const name in values) response.headers.set(name, values[name]!);
    return response;
  } catch {
    const copy = copyResponse(response);
    for (const name in values) copy.headers.set(name, values[name]!);
    return copy;
  }
}
