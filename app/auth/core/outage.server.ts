// The one answer to "the database is unavailable" (contract §12, docs/decisions/052): pages end on
// the error page with Configuration, JSON-mode clients get 503 with that page as `url`, the JSON
// endpoints 503. The outage is logged once per request as `database-unavailable`, with its cause;
// nothing of it reaches the visitor. Which errors count: app/db/unavailable.server.ts.
import { isDatabaseUnavailable } from "../../db/unavailable.server";
import { log } from "./log.server";
import { markRequest, requestMarked } from "./request-context.server";
import { authRequest, type AuthRequest } from "./request.server";
import { errorUrl, jsonResponse, NO_CACHE_HEADERS, redirectResponse } from "./respond.server";

export { isDatabaseUnavailable };

/** Seconds a client is told to wait before asking again (Retry-After on the 503s). */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/** Logs the outage (once per request) and remembers it for the page middleware. */
export function noteDatabaseUnavailable(error: unknown, where: string) {
  if (requestMarked("databaseUnavailable")) return;
  markRequest("databaseUnavailable");
  log("error", "database-unavailable", { where, error });
}

/** handleError's part: a page's loader or action threw the outage; the middleware answers for it. */
export function notePageFailedOnDatabase(error: unknown, where: string) {
  markRequest("pageFailedOnDatabase");
  noteDatabaseUnavailable(error, where);
}

/** The sign-in flow's answer: 302 to the error page, or 503 `{url}` in JSON-redirect mode. */
export function outageRedirect(ar: AuthRequest, init: { json: boolean; setCookies?: readonly (string | null | undefined)[] }): Response {
  const response = redirectResponse(errorUrl(ar, "Configuration"), init);
  if (!init.json) return response;
  const headers = new Headers(response.headers);
  headers.set("Retry-After", String(OUTAGE_RETRY_AFTER_SECONDS));
  return new Response(response.body, { status: 503, headers });
}

/** A JSON endpoint's answer: 503 `{"error":"Configuration"}`. */
export function outageJson(): Response {
  const response = jsonResponse({ error: "Configuration" }, { status: 503, noCache: true });
  response.headers.set("Retry-After", String(OUTAGE_RETRY_AFTER_SECONDS));
  return response;
}

/**
 * For the root middleware: a page whose loader or action failed because of the database (noted
 * by entry.server.tsx's handleError) becomes a redirect to the error page instead of a 500.
 * A React Router data request (.data) gets the same 302, which its client follows as a reload.
 */
export function pageOutageRedirect(request: Request, response: Response): Response {
  // Only a page that failed on the database: the error page's own 500 (Configuration) is its answer.
  if (response.status < 500 || !requestMarked("pageFailedOnDatabase")) return response;
  // The JSON endpoints' own 503s (outageRedirect, outageJson) are already the answer.
  if (response.headers.get("Content-Type")?.startsWith("application/json")) return response;
  const headers = new Headers({ Location: errorUrl(authRequest(request), "Configuration"), ...NO_CACHE_HEADERS });
  return new Response(null, { status: 302, headers });
}
