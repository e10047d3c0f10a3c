// The helpers app pages use to require or show a session, and the error page's data. The sign-in
// and sign-out pages, which list providers, are signin/pages.server.ts.
import { pageOfRequest, toRelative, validateCallbackUrl } from "./callback-url.server";
import { errorPage } from "./messages.server";
import { isDatabaseUnavailable, noteDatabaseUnavailable, OUTAGE_RETRY_AFTER_SECONDS, outageRedirect } from "./outage.server";
import { authRequest, type AuthRequest } from "./request.server";
import { jsonResponse, redirectResponse } from "./respond.server";
import { holdRefusal, takeRefusal } from "./request-context.server";
import { getSession, type CurrentSession } from "./session.server";
import { SIGNED_OUT_HEADERS } from "./security-headers.server";

function headersWith(setCookies: readonly (string | null | undefined)[]): Headers {
  const headers = new Headers();
  for (const c of setCookies) if (c) headers.append("Set-Cookie", c);
  return headers;
}

/** A page's answer that ended this browser's session: its cookie deletions and Clear-Site-Data. */
export function signedOutHeaders(setCookies: readonly (string | null | undefined)[]): Headers {
  const headers = headersWith(setCookies);
  for (const [name, value] of Object.entries(SIGNED_OUT_HEADERS)) headers.set(name, value);
  return headers;
}

export function errorPageData(request: Request) {
  const code = new URL(request.url).searchParams.get("error");
  const page = errorPage(code);
  return { code: code?.slice(0, 64) ?? null, ...page };
}

/** The error page's headers: a 503 (ServiceUnavailable) says when to ask again. */
export function errorPageHeaders(status: number): Record<string, string> {
  return status === 503 ? { "Retry-After": String(OUTAGE_RETRY_AFTER_SECONDS) } : {};
}

export type RequiredSession = { ar: AuthRequest; session: CurrentSession; setCookies: string[] };

/** The JSON error code of a request that needs a session: `401 {"error":"SessionRequired","url"}`. */
export const SESSION_REQUIRED = "SessionRequired";

/** The JSON error code of a refusal for want of a role or permission, or of a cross-site form: `403 {"error":"Forbidden"}`. */
export const FORBIDDEN = "Forbidden";

/** Whether the client asks for JSON: `Accept: application/json`, or Auth.js's `X-Auth-Return-Redirect: 1`. */
export function isJsonClient(request: Request): boolean {
  return request.headers.get("X-Auth-Return-Redirect") === "1" || /\bapplication\/json\b/.test(request.headers.get("Accept") ?? "");
}

/**
 * Whether the request is a script's rather than a page's, and so gets a refusal as JSON: React
 * Router's data request of a page (`/x.data`, `/_root.data`: a navigation or form with JavaScript
 * on) or a JSON client.
 */
export function wantsJsonAnswer(ar: AuthRequest): boolean {
  return ar.url.pathname.endsWith(".data") || isJsonClient(ar.request);
}

/**
 * The answer to a request that needs a session and has none: a page goes to the sign-in page with
 * SessionRequired and the page (never its data request) as callbackUrl; a script's request gets
 * `401 {"error":"SessionRequired","url"}` with that same sign-in URL (ADR 118).
 */
export function sessionRequiredResponse(ar: AuthRequest, setCookies: readonly string[] = []): Response {
  const here = validateCallbackUrl(pageOfRequest(ar.url), ar.origin) ?? `${ar.origin}/`;
  const params = new URLSearchParams({ error: SESSION_REQUIRED, callbackUrl: toRelative(here) });
  const signIn = `${ar.config.basePath}/signin?${params}`;
  if (wantsJsonAnswer(ar)) return jsonRefusal(ar.request, jsonResponse({ error: SESSION_REQUIRED, url: `${ar.origin}${signIn}` }, { status: 401, noCache: true, setCookies }));
  return redirectResponse(signIn, { setCookies });
}

/**
 * `response` (a JSON refusal), noted for the request: a page route's loader or action that throws
 * it is rendered by React Router as the error page, and the root middleware answers a JSON client
 * with the JSON instead (answerJsonClient).
 */
export function jsonRefusal(request: Request, response: Response): Response {
  if (isJsonClient(request)) holdRefusal(response.clone());
  return response;
}

/**
 * For the root middleware: a JSON client's request to a page that a ~/auth helper refused gets the
 * refusal's JSON, not the error page React Router rendered from it. Any other answer is left as is.
 */
export function answerJsonClient(request: Request, response: Response): Response {
  const refusal = takeRefusal();
  if (!refusal || !isJsonClient(request) || new URL(request.url).pathname.endsWith(".data")) return response;
  if (response.status !== refusal.status || !response.headers.get("Content-Type")?.startsWith("text/html")) return response;
  for (const cookie of response.headers.getSetCookie()) if (!refusal.headers.getSetCookie().includes(cookie)) refusal.headers.append("Set-Cookie", cookie);
  return refusal;
}

/**
 * The request's session, or a thrown sessionRequiredResponse: the sign-in page with the page as
 * callbackUrl, or `401 {"error":"SessionRequired","url"}` for a data or JSON request.
 */
export async function requireSession(request: Request, { roll = true } = {}): Promise<RequiredSession> {
  const ar = authRequest(request);
  const { session, setCookies } = await getSession(ar, { roll }).catch((error: unknown) => {
    if (!isDatabaseUnavailable(error)) throw error;
    noteDatabaseUnavailable(error, ar.url.pathname);
    throw outageRedirect(ar, { json: false });
  });
  if (!session) throw sessionRequiredResponse(ar, setCookies);
  return { ar, session, setCookies };
}

/**
 * The session for pages that show it without requiring it. While the database is unavailable a
 * database session cannot be read: such pages (the error page among them) show no one signed in.
 */
export async function optionalSession(request: Request, { roll = true } = {}) {
  const ar = authRequest(request);
  const { session, setCookies } = await getSession(ar, { roll }).catch((error: unknown) => {
    if (!isDatabaseUnavailable(error)) throw error;
    noteDatabaseUnavailable(error, ar.url.pathname);
    return { session: null, setCookies: [] as string[] };
  });
  return { session, headers: headersWith(setCookies) };
}

export { headersWith };
