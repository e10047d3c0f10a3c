// Request builders, a cookie jar and route-calling helpers: tests call loaders and actions with
// real Requests and real cookies, exactly as the server would.
import { RouterContextProvider } from "react-router";

export const ORIGIN = "http://localhost:3000";

type Cookie = { value: string; expires: number | null };

/** Keeps cookies by name like a browser: Set-Cookie replaces, Max-Age=0 or a past Expires deletes. */
export class CookieJar {
  private cookies = new Map<string, Cookie>();

  constructor(initial: Record<string, string> = {}) {
    for (const [k, v] of Object.entries(initial)) this.cookies.set(k, { value: v, expires: null });
  }

  /** Applies every Set-Cookie header of `response` (a Response, Headers, or list of header values). */
  apply(source: Response | Headers | string[] | { init?: ResponseInit | null }): this {
    for (const header of setCookieHeaders(source)) {
      const [pair, ...attrs] = header.split(";").map((s) => s.trim());
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      let expires: number | null = null;
      for (const attr of attrs) {
        const [k, v = ""] = attr.split("=");
        if (k!.toLowerCase() === "max-age") expires = Date.now() + Number(v) * 1000;
        else if (k!.toLowerCase() === "expires" && expires === null) expires = Date.parse(v);
      }
      if (expires !== null && expires <= Date.now()) this.cookies.delete(name);
      else this.cookies.set(name, { value, expires });
    }
    return this;
  }

  /** The raw (still URI-encoded) value, as the browser would send it. */
  get(name: string): string | undefined {
    return this.cookies.get(name)?.value;
  }

  set(name: string, value: string): this {
    this.cookies.set(name, { value, expires: null });
    return this;
  }

  delete(name: string): this {
    this.cookies.delete(name);
    return this;
  }

  names(): string[] {
    return [...this.cookies.keys()];
  }

  header(): string {
    return [...this.cookies].map(([k, c]) => `${k}=${c.value}`).join("; ");
  }
}

export function setCookieHeaders(source: Response | Headers | string[] | { init?: ResponseInit | null }): string[] {
  if (Array.isArray(source)) return source;
  if (source instanceof Response) return source.headers.getSetCookie();
  if (source instanceof Headers) return source.getSetCookie();
  return new Headers(source.init?.headers).getSetCookie();
}

type RequestOptions = { jar?: CookieJar; headers?: Record<string, string>; origin?: string };

function buildHeaders(options: RequestOptions, extra: Record<string, string> = {}) {
  const headers = new Headers({ ...extra, ...options.headers });
  const cookie = options.jar?.header();
  if (cookie) headers.set("Cookie", cookie);
  return headers;
}

export function get(path: string, options: RequestOptions = {}): Request {
  return new Request(new URL(path, options.origin ?? ORIGIN), { headers: buildHeaders(options) });
}

/** A POST with a form body (default) or a JSON body (`json: true`). */
export function post(
  path: string,
  body: Record<string, unknown> | string = {},
  options: RequestOptions & { json?: boolean; method?: string } = {},
): Request {
  const json = options.json ?? false;
  const encoded =
    typeof body === "string"
      ? body
      : json
        ? JSON.stringify(body)
        : new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)])).toString();
  const contentType = json ? "application/json" : "application/x-www-form-urlencoded";
  return new Request(new URL(path, options.origin ?? ORIGIN), {
    method: options.method ?? "POST",
    headers: buildHeaders(options, { "Content-Type": contentType }),
    body: encoded,
  });
}

/** The arguments React Router 8 passes to a loader or action. */
export function routeArgs(request: Request, params: Record<string, string> = {}, pattern = new URL(request.url).pathname) {
  return { request, url: new URL(request.url), pattern, params, context: new RouterContextProvider() };
}

type DataResult = { type: "DataWithResponseInit"; data: unknown; init: ResponseInit | null };

function isDataResult(value: unknown): value is DataResult {
  return typeof value === "object" && value !== null && (value as { type?: unknown }).type === "DataWithResponseInit";
}

/**
 * Calls a loader or action and returns what the client would get as a Response: thrown
 * Responses (redirects) are caught, `data()` results become JSON Responses with their status
 * and headers, plain values become 200 JSON.
 */
export async function callRoute(
  fn: (args: any) => unknown,
  request: Request,
  params: Record<string, string> = {},
): Promise<Response> {
  let result: unknown;
  try {
    result = await fn(routeArgs(request, params));
  } catch (thrown) {
    if (thrown instanceof Response) return thrown;
    if (isDataResult(thrown)) result = thrown;
    else throw thrown;
  }
  if (result instanceof Response) return result;
  if (isDataResult(result)) {
    const headers = new Headers(result.init?.headers);
    headers.set("Content-Type", "application/json");
    return new Response(JSON.stringify(result.data), { status: result.init?.status ?? 200, headers });
  }
  return new Response(JSON.stringify(result ?? null), { status: 200, headers: { "Content-Type": "application/json" } });
}

/** Fetches a CSRF token the way a client does (GET /auth/csrf) and keeps its cookie in the jar. */
export async function fetchCsrf(jar: CookieJar): Promise<string> {
  const { csrfResponse } = await import("../../app/auth/core/endpoints.server");
  const res = csrfResponse(get("/auth/csrf", { jar }));
  jar.apply(res);
  return ((await res.json()) as { csrfToken: string }).csrfToken;
}
