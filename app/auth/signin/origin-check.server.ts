// POSTs from another site (docs/decisions/037-csp-and-origin.md), for the app's
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
import { FORBIDDEN, isJsonClient } from "../core/page-session.server";
import { authRequest } from "../core/request.server";
import { jsonResponse } from "../core/respond.server";
import { escapeHtml } from "../../html";
import { directionOf } from "../../i18n/languages.server";
import { currentLocale, t } from "../../i18n/t.server";
import { pageTitle } from "../../site";
import { CSP_REPORT_PATH } from "../core/security-headers.server";
import { ACS_PATH_PATTERN } from "../saml/paths";

/** Paths under the base path whose POSTs are the sign-in flow's to refuse. */
const FLOW_PATH = /^\/(?:signin(?:\/[^/]+)?|signout|callback\/[^/]+)\/?$/;

/**
 * The "not allowed" page for a refused form, in the visitor's language (the request runs in it:
 * the root middleware). Written here, not rendered by React: no loader runs for a refused request,
 * and the root layout takes its language from the root loader.
 */
function refusedFormPage(): Response {
  const locale = currentLocale();
  const [heading, message, home] = [t("boundary.forbidden.heading"), t("boundary.forbidden.message"), t("common.homeLink")].map(escapeHtml);
  const body =
    `<!DOCTYPE html><html lang="${locale}" dir="${directionOf(locale)}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(pageTitle(getConfig().siteName, t("boundary.forbidden.heading")))}</title></head>` +
    `<body><main><h1>${heading}</h1><p role="alert">${message}</p><p><a href="/">${home}</a></p></main></body></html>`;
  return new Response(body, { status: 403, headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" } });
}

/**
 * For a cross-site POST outside the sign-in flow: 403, before any action runs — the "not allowed"
 * page for a form posted without JavaScript, `{"error":"Forbidden"}` for a JSON client, and for
 * React Router's data request the same JSON to throw (its client shows the route's error boundary,
 * in the page's language). Null when the request may go on.
 */
export function crossOriginPostRefusal(request: Request): { response: Response; thrown: boolean } | null {
  if (request.method.toUpperCase() !== "POST") return null;
  // A request carrying credentials in Authorization (a bearer token: /mcp, the app's APIs) is not
  // the cookie-borne POST this check stops: a browser sends such a header to another origin only
  // after a CORS preflight that route answered (ADR 142), and a form cannot send it at all.
  if (request.headers.has("Authorization")) return null;
  const ar = authRequest(request, getConfig());
  if (!isCrossOriginPost(ar)) return null;
  const path = ar.url.pathname.replace(/\.data$/, "");
  if (path === CSP_REPORT_PATH) return null;
  // A SAML assertion consumer: the IdP's POST, bound by the stored request it answers (ADR 154).
  if (ACS_PATH_PATTERN.test(path)) return null;
  const base = ar.config.basePath;
  if (path.startsWith(`${base}/`) && FLOW_PATH.test(path.slice(base.length))) return null;
  const json = jsonResponse({ error: FORBIDDEN }, { status: 403, noCache: true });
  if (ar.url.pathname.endsWith(".data")) return { response: json, thrown: true };
  return { response: isJsonClient(request) ? json : refusedFormPage(), thrown: false };
}
