// Every response shape the auth endpoints use: redirects (or `{url}` in JSON-redirect mode),
// JSON with the no-cache headers, error redirects by code, and the generic 400.
import { isErrorPageCode, type AuthErrorCode } from "./errors";
import type { AuthRequest } from "./request.server";
import { DirectAnswer } from "./direct-answer.server";
import { writtenDirectly } from "./request-context.server";

export const NO_CACHE_HEADERS = {
  "Cache-Control": "private, no-cache, no-store",
  Pragma: "no-cache",
  Expires: "0",
} as const;

/** Auth.js v5 clients send `X-Auth-Return-Redirect: 1`; v4 clients post `json=true`. */
export function wantsJsonRedirect(request: Request, body?: Record<string, unknown>): boolean {
  return request.headers.get("X-Auth-Return-Redirect") === "1" || body?.json === "true" || body?.json === true;
}

function withCookies(headers: Headers, setCookies: readonly (string | null | undefined)[]) {
  for (const c of setCookies) if (c) headers.append("Set-Cookie", c);
  return headers;
}

const JSON_HEADERS: readonly [string, string][] = [["Content-Type", "application/json"]];
const JSON_NO_CACHE_HEADERS: readonly [string, string][] = [...JSON_HEADERS, ...Object.entries(NO_CACHE_HEADERS)];

export function jsonResponse(
  body: unknown,
  init: { status?: number; setCookies?: readonly (string | null | undefined)[]; noCache?: boolean } = {},
): Response {
  // JSON.stringify(undefined) is undefined: an empty body, as before the length was counted.
  return jsonTextResponse(JSON.stringify(body) ?? "", init);
}

/**
 * jsonResponse for a body already serialised (a constant answer built once). The headers are
 * appended to the Response's own: handed over as a list of pairs, undici's WebIDL conversion copies
 * every pair first (4 KB a JSON answer, against 1 KB this way; docs/decisions/089).
 */
export function jsonTextResponse(
  text: string,
  init: { status?: number; setCookies?: readonly (string | null | undefined)[]; noCache?: boolean } = {},
): Response {
  const status = init.status ?? 200;
  // The fast path writes the text itself (ADR 089, 099): a Response without the byte stream a body
  // would build (about 3 KB a request) and the reader that would take it apart again, its
  // headers a plain map rather than undici's.
  const response = writtenDirectly() ? new DirectAnswer(text, status) : new Response(text, { status });
  const headers = response.headers;
  // set, not append: a text body comes with undici's own Content-Type (text/plain), replaced here.
  for (const [name, value] of init.noCache ? JSON_NO_CACHE_HEADERS : JSON_HEADERS) headers.set(name, value);
  // Its length said up front, so the answer goes out in one piece rather than chunked (a chunk's
  // size line, the text, its CRLF and the closing chunk, several writes) on both paths (ADR 099).
  headers.set("Content-Length", String(Buffer.byteLength(text)));
  if (init.setCookies) for (const cookie of init.setCookies) if (cookie) headers.append("Set-Cookie", cookie);
  return response;
}

/** The text an answer carries beside its Response for the fast path's writer; undefined for any other Response. */
export function answerTextOf(response: Response): string | undefined {
  return response instanceof DirectAnswer ? response.bodyText : undefined;
}

/** A copy of `response` (its headers mutable), its text beside it included. */
export function copyResponse(response: Response): Response {
  return response instanceof DirectAnswer ? response.copy() : new Response(response.body, response);
}

/** 302 to `location`, or 200 `{url}` with the same Set-Cookie headers in JSON-redirect mode. */
export function redirectResponse(
  location: string,
  init: { json?: boolean; setCookies?: readonly (string | null | undefined)[] } = {},
): Response {
  const headers = withCookies(new Headers({ Location: location }), init.setCookies ?? []);
  if (init.json) {
    headers.set("Content-Type", "application/json");
    for (const [k, v] of Object.entries(NO_CACHE_HEADERS)) headers.set(k, v);
    return new Response(JSON.stringify({ url: location }), { status: 200, headers });
  }
  return new Response(null, { status: 302, headers });
}

/** The absolute URL of the page that shows `code`: the sign-in page or the error page. */
export function errorUrl(ar: AuthRequest, code: AuthErrorCode, extra: Record<string, string> = {}): string {
  const page = isErrorPageCode(code) ? "error" : "signin";
  const params = new URLSearchParams({ error: code, ...extra });
  return `${ar.origin}${ar.config.basePath}/${page}?${params}`;
}

export function errorRedirect(
  ar: AuthRequest,
  code: AuthErrorCode,
  init: { json?: boolean; setCookies?: readonly (string | null | undefined)[]; extra?: Record<string, string> } = {},
): Response {
  return redirectResponse(errorUrl(ar, code, init.extra), init);
}

export function badRequest(status = 400, message = "Bad request."): Response {
  return jsonResponse(message, { status });
}
