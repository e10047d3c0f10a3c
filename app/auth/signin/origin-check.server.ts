// POSTs from another site (contract §10; docs/decisions/037-csp-and-origin.md), for the app's
// root middleware, so that no action — a page's, a JSON endpoint's, one added later — runs for
// them. The sign-in flow's endpoints are let through: their CSRF check (core/csrf.server.ts)
// refuses a foreign Origin itself and answers the way the protocol does, a MissingCSRF redirect
// (or `{url}` in JSON-redirect mode); an OAuth callback checks no CSRF token, so a provider's
// `response_mode=form_post` POST, whose Origin is the provider, reaches the state, PKCE and nonce
// checks that tie it to the browser. CSP violation reports are let through too: a browser may
// send them with `Origin: null` (a sandboxed frame's), and they change nothing — the endpoint only
// logs, size- and rate-limited (docs/decisions/073). Everything else answers 403.
import { getConfig } from "../core/config.server";
import { isCrossOriginPost } from "../core/origin.server";
import { authRequest } from "../core/request.server";
import { badRequest } from "../core/respond.server";
import { CSP_REPORT_PATH } from "../core/security-headers.server";

/** Paths under the base path whose POSTs are the sign-in flow's to refuse. */
const FLOW_PATH = /^\/(?:signin(?:\/[^/]+)?|signout|callback\/[^/]+)\/?$/;

/** 403 for a cross-site POST outside the sign-in flow; null when the request may go on. */
export function refuseCrossOriginPost(request: Request): Response | null {
  if (request.method.toUpperCase() !== "POST") return null;
  // A request carrying credentials in Authorization (a bearer token: /mcp, the app's APIs) is not
  // the cookie-borne POST this check stops: a browser sends such a header to another origin only
  // after a CORS preflight that route answered (ADR 142), and a form cannot send it at all.
  if (request.headers.has("Authorization")) return null;
  const ar = authRequest(request, getConfig());
  if (!isCrossOriginPost(ar)) return null;
  const path = ar.url.pathname.replace(/\.data$/, "");
  if (path === CSP_REPORT_PATH) return null;
  const base = ar.config.basePath;
  if (path.startsWith(`${base}/`) && FLOW_PATH.test(path.slice(base.length))) return null;
  return badRequest(403, "Forbidden.");
}
