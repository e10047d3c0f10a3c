// POSTs from another site (contract §10; docs/decisions/037-csp-and-origin.md), for the app's
// root middleware, so that no action — a page's, a JSON endpoint's, one added later — runs for
// them. The sign-in flow's endpoints are let through: their CSRF check (core/csrf.server.ts)
// refuses a foreign Origin itself and answers the way the protocol does, a MissingCSRF redirect
// (or `{url}` in JSON-redirect mode); an OAuth callback checks no CSRF token, so a provider's
// `response_mode=form_post` POST, whose Origin is the provider, reaches the state, PKCE and nonce
// checks that tie it to the browser. CSP violation reports are let through too: a browser may
// send them with `Origin: null` (a sandboxed frame's), and they change nothing — the endpoint only
// logs, size- and rate-limited (docs/decisions/073). Everything else answers 403, before any
// action runs: a page with the "not allowed" page, a JSON client with `{"error":"Forbidden"}` (ADR 118).
import { getConfig } from "../core/config.server";
import { isCrossOriginPost } from "../core/origin.server";
import { isJsonClient } from "../core/page-session.server";
import { authRequest } from "../core/request.server";
import { jsonResponse } from "../core/respond.server";
import { CSP_REPORT_PATH } from "../core/security-headers.server";

/** Paths under the base path whose POSTs are the sign-in flow's to refuse. */
const FLOW_PATH = /^\/(?:signin(?:\/[^/]+)?|signout|callback\/[^/]+)\/?$/;

/** The JSON error code of a refused cross-site POST: `403 {"error":"Forbidden"}`. */
export const CROSS_SITE_REFUSED = "Forbidden";

/**
 * For a cross-site POST outside the sign-in flow: `403 {"error":"Forbidden"}`, and whether to throw
 * it (a page's or its data request's: the root's error boundary shows the "not allowed" page in
 * the visitor's language, or React Router's client gets it as the route's error) or return it as
 * is (a JSON client). Null when the request may go on.
 */
export function crossOriginPostRefusal(request: Request): { response: Response; page: boolean } | null {
  if (request.method.toUpperCase() !== "POST") return null;
  const ar = authRequest(request, getConfig());
  if (!isCrossOriginPost(ar)) return null;
  const path = ar.url.pathname.replace(/\.data$/, "");
  if (path === CSP_REPORT_PATH) return null;
  const base = ar.config.basePath;
  if (path.startsWith(`${base}/`) && FLOW_PATH.test(path.slice(base.length))) return null;
  const json = !ar.url.pathname.endsWith(".data") && isJsonClient(request);
  return { response: jsonResponse({ error: CROSS_SITE_REFUSED }, { status: 403, noCache: true }), page: !json };
}
