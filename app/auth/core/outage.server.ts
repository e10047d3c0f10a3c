// The one answer to "the database is unavailable" (docs/decisions/052, 106): pages end
// on the error page with ServiceUnavailable (503, Retry-After, in the visitor's language), JSON-mode
// clients get 503 with that page as `url`, the JSON endpoints 503 {"error":"ServiceUnavailable"}.
// The outage is logged once as it begins (`database-unavailable`, with its cause), then once a
// minute while it lasts and once when it ends (`database-back`), with how many requests it cost —
// not once per request; nothing of it reaches the visitor. Which errors count:
// app/db/unavailable.server.ts.
import { db } from "../../db/client.server";
import { escapeHtml } from "../../html";
import { DEFAULT_LOCALE, directionOf } from "../../i18n/languages.server";
import { fromAcceptLanguage, fromLanguageCookie } from "../../i18n/negotiate.server";
import { runWithLocale, t } from "../../i18n/t.server";
import { pageTitle } from "../../site";
import { getConfig } from "./config.server";
import { isDatabaseUnavailable } from "../../db/unavailable.server";
import { log } from "./log.server";
import { markRequest, outsideRequest, requestMarked } from "./request-context.server";
import { authRequest, type AuthRequest } from "./request.server";
import { errorUrl, jsonResponse, NO_CACHE_HEADERS, redirectResponse } from "./respond.server";

export { isDatabaseUnavailable };

/** Seconds a client is told to wait before asking again (Retry-After on the 503s). */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/** How often, during an outage, the database is asked whether it is back. */
const OUTAGE_CHECK_MS = 1_000;
/** How often a long outage is summed up in the log. */
const OUTAGE_SUMMARY_MS = 60_000;

/** The outage in progress in this process, if any. */
let outage: { since: number; refused: number; summarised: number } | null = null;

/**
 * Counts a request the outage refused, and remembers it for the page middleware. The first one
 * logs the outage and starts asking the database, outside any request, whether it is back.
 */
export function noteDatabaseUnavailable(error: unknown, where: string) {
  if (requestMarked("databaseUnavailable")) return;
  markRequest("databaseUnavailable");
  if (outage) {
    outage.refused++;
    return;
  }
  const now = Date.now();
  outage = { since: now, refused: 1, summarised: now };
  log("error", "database-unavailable", { where, error, message: "the database is unavailable: requests that need it get 503 until it is back" });
  outsideRequest(() => scheduleOutageCheck());
}

function scheduleOutageCheck() {
  setTimeout(() => void checkOutage(), OUTAGE_CHECK_MS).unref();
}

async function checkOutage() {
  const current = outage;
  if (!current) return;
  const back = await db()
    .$queryRawUnsafe("SELECT 1")
    .then(() => true, () => false);
  const downMs = Date.now() - current.since;
  if (back) {
    outage = null;
    log("info", "database-back", {
      downMs,
      refusedRequests: current.refused,
      message: `database back after ${Math.round(downMs / 1000)} s, ${current.refused} requests refused`,
    });
    return;
  }
  if (Date.now() - current.summarised >= OUTAGE_SUMMARY_MS) {
    current.summarised = Date.now();
    log("warn", "database-still-unavailable", { downMs, refusedRequests: current.refused });
  }
  scheduleOutageCheck();
}

/** handleError's part: a page's loader or action threw the outage; the middleware answers for it. */
export function notePageFailedOnDatabase(error: unknown, where: string) {
  markRequest("pageFailedOnDatabase");
  noteDatabaseUnavailable(error, where);
}

/** The sign-in flow's answer: 302 to the error page, or 503 `{url}` in JSON-redirect mode. */
export function outageRedirect(ar: AuthRequest, init: { json: boolean; setCookies?: readonly (string | null | undefined)[] }): Response {
  const response = redirectResponse(errorUrl(ar, "ServiceUnavailable"), init);
  if (!init.json) return response;
  const headers = new Headers(response.headers);
  headers.set("Retry-After", String(OUTAGE_RETRY_AFTER_SECONDS));
  return new Response(response.body, { status: 503, headers });
}

/**
 * What server/main.ts answers before the migrations could run, the database not answering yet
 * (ADR 106) — the app's pages cannot be rendered then. A page request (GET/HEAD asking for HTML):
 * the ServiceUnavailable page's text in the visitor's language, as a plain page; anything else
 * 503 `{"error":"ServiceUnavailable"}`. Both with Retry-After.
 */
export function startupOutageAnswer(request: { method: string; headers: Record<string, string | string[] | undefined> }): {
  status: 503;
  headers: Record<string, string>;
  body: string;
} {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  };
  const retry = { "Retry-After": String(OUTAGE_RETRY_AFTER_SECONDS), "Cache-Control": "no-store" };
  const wantsPage = (request.method === "GET" || request.method === "HEAD") && (header("accept") ?? "").includes("text/html") && !header("x-auth-return-redirect");
  if (!wantsPage) return { status: 503, headers: { ...retry, "Content-Type": "application/json" }, body: JSON.stringify({ error: "ServiceUnavailable" }) };
  const locale = fromLanguageCookie(header("cookie")) ?? fromAcceptLanguage(header("accept-language")) ?? DEFAULT_LOCALE;
  const body = runWithLocale(locale, () => {
    const [heading, message, detail] = (["heading", "message", "detail"] as const).map((part) => escapeHtml(t(`errorPage.ServiceUnavailable.${part}`)));
    return (
      `<!DOCTYPE html><html lang="${locale}" dir="${directionOf(locale)}"><head><meta charset="utf-8">` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(pageTitle(getConfig().siteName, t("errorPage.ServiceUnavailable.heading")))}</title></head>` +
      `<body><main><h1>${heading}</h1><p role="alert">${message}</p><p>${detail}</p></main></body></html>`
    );
  });
  return { status: 503, headers: { ...retry, "Content-Type": "text/html; charset=utf-8", "Content-Language": locale, Vary: "Accept-Language, Cookie" }, body };
}

/** A JSON endpoint's answer: 503 `{"error":"ServiceUnavailable"}`. */
export function outageJson(): Response {
  const response = jsonResponse({ error: "ServiceUnavailable" }, { status: 503, noCache: true });
  response.headers.set("Retry-After", String(OUTAGE_RETRY_AFTER_SECONDS));
  return response;
}

/**
 * For the root middleware: a page whose loader or action failed because of the database (noted
 * by entry.server.tsx's handleError) becomes a redirect to the error page instead of a 500.
 * A React Router data request (.data) gets the same 302, which its client follows as a reload.
 */
export function pageOutageRedirect(request: Request, response: Response): Response {
  // Only a page that failed on the database: the error page's own 503 (ServiceUnavailable) is its answer.
  if (response.status < 500 || !requestMarked("pageFailedOnDatabase")) return response;
  // The JSON endpoints' own 503s (outageRedirect, outageJson) are already the answer.
  if (response.headers.get("Content-Type")?.startsWith("application/json")) return response;
  const headers = new Headers({ Location: errorUrl(authRequest(request), "ServiceUnavailable"), ...NO_CACHE_HEADERS });
  return new Response(null, { status: 302, headers });
}
