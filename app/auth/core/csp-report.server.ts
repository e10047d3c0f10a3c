// POST /auth/csp-report: the pages' Content-Security-Policy violation reports (// docs/decisions/073-headers-and-csp-reports.md). Browsers send them unasked and without a CSRF
// token, as `application/csp-report` (report-uri) or `application/reports+json` (report-to, a
// batch). Each accepted report is one log line with only what helps find the cause — the page
// without its query, the directive, the blocked resource's origin — never a sample of the code,
// a query string or a path of another site, which may carry someone's data. Size- and
// rate-limited: each report counts against the client's budget (a batch of N costs N, and at most
// MAX_REPORTS_PER_BODY of a body are read), and only reports about this site's own pages (the
// document on the app's origin) are logged — a sender cannot use this log to keep another site's
// addresses. Anything else is a 4xx, never a 500.
import { BadRequestError, CSP_REPORT_BODY_LIMIT, readJsonDocument, refusedBodyResponse } from "./body.server";
import { clientSubject, countHit, countHits } from "./limits.server";
import { log } from "./log.server";
import { isDatabaseUnavailable, noteDatabaseUnavailable, outageJson } from "./outage.server";
import { authRequest, clientAddress } from "./request.server";
import { badRequest } from "./respond.server";

export const CSP_REPORT_TYPES = ["application/csp-report", "application/reports+json", "application/json"] as const;

/** At most this many reports of one Reporting API batch are read (and counted, and logged). */
const MAX_REPORTS_PER_BODY = 10;

/** What one report says, cut to what the log keeps. */
export type CspViolation = {
  documentUri: string | null;
  directive: string | null;
  blocked: string | null;
  disposition: string | null;
};

/** A URL as its origin and path (query and fragment dropped); null when it is no URL. */
function withoutQuery(value: unknown): string | null {
  if (typeof value !== "string" || !URL.canParse(value)) return null;
  const url = new URL(value);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return `${url.origin}${url.pathname}`.slice(0, 300);
}

/** The blocked resource: its origin for a URL, the keyword for "inline", "eval", "data" and the like. */
function blockedSource(value: unknown): string | null {
  if (typeof value !== "string" || value === "") return null;
  if (URL.canParse(value)) {
    const url = new URL(value);
    return url.origin === "null" ? url.protocol.replace(/:$/, "") : url.origin;
  }
  return /^[a-z][a-z0-9-]{0,30}$/i.test(value) ? value.toLowerCase() : null;
}

/** A directive's name ("script-src-elem"), without the sources a legacy violated-directive lists. */
function directiveName(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const name = value.trim().split(/\s+/, 1)[0] ?? "";
  return /^[a-z][a-z-]{0,40}$/i.test(name) ? name.toLowerCase() : null;
}

function keyword(value: unknown): string | null {
  return typeof value === "string" && /^[a-z]{1,20}$/i.test(value) ? value.toLowerCase() : null;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The violations a body carries: `{"csp-report": {...}}` (report-uri), or an array of
 * `{type: "csp-violation", body: {...}}` (report-to); other report types in a batch are skipped.
 * Empty when the body is none of these.
 */
export function cspViolations(document: unknown): CspViolation[] {
  if (isObject(document) && isObject(document["csp-report"])) {
    const r = document["csp-report"];
    return [
      {
        documentUri: withoutQuery(r["document-uri"]),
        directive: directiveName(r["effective-directive"] ?? r["violated-directive"]),
        blocked: blockedSource(r["blocked-uri"]),
        disposition: keyword(r["disposition"]),
      },
    ];
  }
  if (!Array.isArray(document)) return [];
  return document
    .filter((item): item is Record<string, unknown> => isObject(item) && item.type === "csp-violation" && isObject(item.body))
    .slice(0, MAX_REPORTS_PER_BODY)
    .map((item) => {
      const r = item.body as Record<string, unknown>;
      return {
        documentUri: withoutQuery(r.documentURL ?? item.url),
        directive: directiveName(r.effectiveDirective),
        blocked: blockedSource(r.blockedURL),
        disposition: keyword(r.disposition),
      };
    });
}

export async function cspReportResponse(request: Request): Promise<Response> {
  const ar = authRequest(request);
  const client = clientAddress(ar);
  // Counted before the body is read: garbage costs the sender as much as a report.
  let refused;
  try {
    refused = await countHit(ar.config.rateLimits, "CSP_REPORT", clientSubject(client));
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    noteDatabaseUnavailable(error, "POST /auth/csp-report");
    return outageJson();
  }
  if (refused) return new Response(null, { status: 429, headers: { "Retry-After": String(refused.retryAfterSeconds) } });
  let document: unknown;
  try {
    document = await readJsonDocument(request, CSP_REPORT_TYPES, CSP_REPORT_BODY_LIMIT);
  } catch (error) {
    if (error instanceof BadRequestError) return refusedBodyResponse(error);
    throw error;
  }
  const violations = cspViolations(document);
  if (violations.length === 0) return badRequest();
  // The first report was paid for before the body was read; each further one costs one more, and
  // those past the budget are dropped unlogged.
  let granted: number;
  try {
    granted = 1 + (await countHits(ar.config.rateLimits, "CSP_REPORT", clientSubject(client), violations.length - 1));
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    noteDatabaseUnavailable(error, "POST /auth/csp-report");
    return outageJson();
  }
  const ownPage = `${ar.origin}/`;
  for (const violation of violations.slice(0, granted)) {
    // A report about another site's document is none of this site's business, and its path may
    // carry someone's data: not logged.
    if (violation.documentUri === null || !violation.documentUri.startsWith(ownPage)) continue;
    log("warn", "csp-violation", violation);
  }
  return new Response(null, { status: 204 });
}
