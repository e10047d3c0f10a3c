// The production server's fast path for the auth JSON endpoints (docs/decisions/055-fast-path.md,
// 089-fast-path-without-fetch-objects.md). GET /auth/session, /auth/csrf and /auth/providers,
// POST /auth/_log and the bearer-token example GET /api/me (ADR 144) render nothing: React Router's request handler would parse and normalise the
// URL, look for a manifest request, match the route table, build a router context and a static
// handler query, and run the root middleware and the route's loader or action. Here the same
// route modules of the server build — the root middleware and the route's loader or action, the
// single definition the dev server and the tests use — run directly, and the answer goes out with
// the status, headers and framing the adapter's writer gives it, byte for byte what the full
// pipeline sends. A GET or HEAD is handed to them as a NodeRequest (below) rather than a Fetch
// Request, and an answer whose JSON text the app handed over beside its Response (respond.server.ts
// jsonTextResponse, a DirectAnswer whose headers are a plain map) is written from that text: no
// body stream built and read back, no Fetch Headers sorted and validated at every call. Anything the
// fast path is not sure of (another path spelling, a .data request, another method) goes to
// React Router unchanged.
import { existsSync } from "node:fs";
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import path from "node:path";
import { createRequest, sendResponse } from "@remix-run/node-fetch-server";
import { RouterContextProvider, type ServerBuild } from "react-router";
import type * as ServerEntry from "../app/entry.server.tsx";

/** Paths answered here: resource routes (no component, no error boundary) of the root. */
export const FAST_PATHS: readonly string[] = ["/auth/session", "/auth/csrf", "/auth/providers", "/auth/_log", "/api/me"];

/** Methods React Router sends to a resource route's loader (GET, HEAD) or action (POST). */
const LOADER_METHODS = new Set(["GET", "HEAD"]);
const ACTION_METHODS = new Set(["POST"]);

/**
 * The fast path for `build`: a function (req, res) → true when it answered, false when React
 * Router must. `clientDirectory` is the static assets folder: a path that is also a file there is
 * left to the server's normal order (assets first).
 */
type RouteModule = NonNullable<ServerBuild["routes"][string]>["module"];
type Handler = NonNullable<RouteModule["loader"]>;
type HandlerArgs = Parameters<Handler>[0];
type Middleware = (args: HandlerArgs, next: () => Promise<Response>) => Promise<Response | undefined | void> | Response | undefined | void;
type FastRoute = { path: string; module: RouteModule; middleware: Middleware[] };

export type FastPath = ((req: IncomingMessage, res: ServerResponse) => boolean) & { paths: string[] };

export function createFastPath(build: ServerBuild, { clientDirectory }: { clientDirectory?: string } = {}): FastPath {
  const root = build.routes.root!;
  const handleError = build.entry.module.handleError;
  // What the app's entry gives the writer: an answer's text beside its Response, and the call that
  // asks for it (absent from a build made before them: every answer then goes through the reader).
  const entry = build.entry.module as unknown as Partial<typeof ServerEntry>;
  const answerTextOf = entry.answerTextOf ?? (() => undefined);
  const answerWrittenDirectly = entry.answerWrittenDirectly ?? (() => undefined);
  const routes = new Map<string, FastRoute>();
  for (const pathname of FAST_PATHS) {
    const route = Object.values(build.routes).find((r) => r?.parentId === "root" && r.path === pathname.slice(1));
    if (!route) continue;
    const m = route.module;
    // A route that renders (or could) is a document request: React Router's alone.
    if (m.default != null || m.ErrorBoundary != null || typeof m.loader !== "function" || typeof m.action !== "function") continue;
    if (clientDirectory && existsSync(path.join(clientDirectory, pathname))) continue;
    routes.set(pathname, { path: pathname, module: m, middleware: [...(root.module.middleware ?? []), ...(m.middleware ?? [])] as Middleware[] });
  }

  const fastPath = Object.assign(answers, { paths: [...routes.keys()] });
  return fastPath;

  function answers(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? "";
    const q = url.indexOf("?");
    const route = routes.get(q < 0 ? url : url.slice(0, q));
    if (!route || req.httpVersionMajor !== 1) return false;
    const method = req.method ?? "";
    const isLoader = LOADER_METHODS.has(method);
    if (!isLoader && !ACTION_METHODS.has(method)) return false;
    let request: Request;
    try {
      // A loader's request has no body: what the route modules read of it comes from node's own.
      request = isLoader ? NodeRequest.of(req, res) : createRequest(req, res);
    } catch {
      return false;
    }
    void answer(route, (isLoader ? route.module.loader : route.module.action) as Handler, request, res);
    return true;
  }

  async function answer(route: FastRoute, handler: Handler, request: Request, res: ServerResponse) {
    answerWrittenDirectly();
    const args = new RouteArgs(request, route.path) as unknown as HandlerArgs;
    let response: Response;
    try {
      response = await runMiddleware(route.middleware, args, async () => {
        try {
          return asResponse(await handler(args));
        } catch (error) {
          return refusal(error, args);
        }
      });
    } catch (error) {
      response = refusal(error, args);
    }
    // A NodeRequest's signal is the connection's close, which res.destroyed already says.
    if (res.destroyed || (!((request as unknown) instanceof NodeRequest) && request.signal.aborted)) return;
    try {
      const text = response.body === null ? answerTextOf(response) : undefined;
      if (text === undefined) await sendResponse(res, response);
      else writeText(res, response, text);
    } catch (error) {
      if (!res.headersSent) {
        // writeHead may have taken some of the answer's headers before one failed: its length
        // would frame the empty 500 wrongly, and the next answer on the connection would be read as its body.
        res.removeHeader("Content-Length");
        res.statusCode = 500;
        res.end();
      } else res.destroy(error instanceof Error ? error : undefined);
    }
  }

  // What React Router makes of a resource route's thrown value (server-runtime handleResourceRequest):
  // a Response is the answer; anything else is logged through the app's handleError and becomes
  // its production 500, which says nothing more. (These routes' loaders and actions return
  // Responses and never throw React Router's data() errors, whose JSON form is not rebuilt here.)
  function refusal(error: unknown, args: HandlerArgs): Response {
    if (isResponse(error)) return error;
    handleError?.(error, { request: args.request, params: args.params, context: args.context });
    return new Response("Unexpected Server Error", { status: 500, headers: { "Content-Type": "text/plain" } });
  }
}

/**
 * What React Router hands a resource route's middleware, loader or action: `url` (the request's
 * URL, built only when read) and `pattern` (the matched path, here the path itself). A class, not
 * an object literal with a getter: a literal's getter is a new closure each time, and the hidden
 * class V8 makes for it is reachable from the old generation's transition tree, so the young
 * collections kept every request's objects alive and promoted them (docs/decisions/096). `url` is
 * on the prototype: a spread or Object.assign of these arguments drops it (nothing here does either).
 */
class RouteArgs {
  readonly request: Request;
  readonly pattern: string;
  readonly params = {};
  readonly context = new RouterContextProvider();
  constructor(request: Request, pattern: string) {
    this.request = request;
    this.pattern = pattern;
  }
  get url(): URL {
    return new URL(this.request.url);
  }
}

/**
 * An answer whose body is `text`, written as the adapter's sendResponse writes it (Fetch header
 * names in their order, Set-Cookie as a list, the body after the head, nothing for HEAD): the same
 * bytes, without a stream and its reader. Its Content-Length is among its headers (ADR 099), so
 * head and text leave in one write.
 */
function writeText(res: ServerResponse, response: Response, text: string): void {
  const headers: OutgoingHttpHeaders = {};
  for (const [key, value] of response.headers) {
    const held = headers[key];
    if (held === undefined) headers[key] = value;
    else if (Array.isArray(held)) held.push(value);
    else headers[key] = [held as string, value];
  }
  res.writeHead(response.status, response.statusText, headers);
  res.end(res.req.method === "HEAD" ? undefined : text);
}

/**
 * What the route modules read of a GET or HEAD request — method, URL, headers by name, signal —
 * read from node's request instead of a Fetch Request built from it. Building one costs about
 * 8 KB a request: the Request, a Headers copy of every header, an AbortController, and the signal
 * follower undici registers with a FinalizationRegistry, which outlives the request into the old
 * generation (docs/decisions/089). Values are the ones the adapter's Request would hold: the URL
 * as the URL parser serialises it, each header as node joined it, the signal aborted when the
 * connection closes before the answer is written. Anything else a route module asked of it would
 * be a TypeError, which the byte-for-byte test (tests/browser/fast-path.test.ts) would show as a 500.
 */
class NodeRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: NodeHeaders;
  #res: ServerResponse;
  #signal: AbortSignal | undefined;

  private constructor(method: string, url: string, headers: IncomingHttpHeaders, res: ServerResponse) {
    this.method = method;
    this.url = url;
    this.headers = new NodeHeaders(headers);
    this.#res = res;
  }

  /** The request the route modules get, as a Request (they read no more of it); throws where the adapter's would. */
  static of(req: IncomingMessage, res: ServerResponse): Request {
    const host = req.headers.host;
    const url = URL.parse(`http://${host ?? "localhost"}${req.url ?? "/"}`);
    // HTTP/2's :authority never reaches here (HTTP/1 only); a target the URL parser refuses is React Router's.
    if (!url || url.username || url.password) throw new TypeError("not a URL the adapter would build");
    return new NodeRequest(req.method!, url.href, req.headers, res) as unknown as Request;
  }

  /** Built only when read (handleError, the fast path after a failure). */
  get signal(): AbortSignal {
    if (this.#signal) return this.#signal;
    const controller = new AbortController();
    const res = this.#res;
    if (res.destroyed && !res.writableFinished) controller.abort();
    else res.once("close", () => res.writableFinished || controller.abort());
    return (this.#signal = controller.signal);
  }
}

/** Fetch Headers' get and has over node's parsed headers (names are case-insensitive; node keeps them in lower case). */
class NodeHeaders {
  #source: IncomingHttpHeaders;
  constructor(source: IncomingHttpHeaders) {
    this.#source = source;
  }
  get(name: string): string | null {
    const value = this.#source[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }
  has(name: string): boolean {
    return this.#source[name.toLowerCase()] !== undefined;
  }
}

/** React Router's test for a Response (router isResponse): by shape, so one of another realm counts too. */
function isResponse(value: unknown): value is Response {
  const v = value as Partial<Response> | null | undefined;
  return v != null && typeof v.status === "number" && typeof v.statusText === "string" && typeof v.headers === "object" && typeof v.body !== "undefined";
}

/**
 * What React Router makes of a resource route's result (server-runtime handleQueryRouteResult): a
 * Response is the answer, a string a text answer, anything else JSON; nothing at all is its
 * "Expected a Response" error, which refusal() turns into the production 500.
 */
function asResponse(result: unknown): Response {
  if (isResponse(result)) return result;
  if (result === undefined) throw new Error("Expected a Response to be returned from resource route handler");
  if (typeof result === "string") return new Response(result);
  return Response.json(result);
}

/** React Router's middleware order: each calls next() for the rest; one that does not still gets it called. */
async function runMiddleware(middleware: Middleware[], args: HandlerArgs, handler: () => Promise<Response>, index = 0): Promise<Response> {
  if (index >= middleware.length) return handler();
  let nextResult: Response | undefined;
  let called = false;
  const next = async () => {
    called = true;
    nextResult = await runMiddleware(middleware, args, handler, index + 1);
    return nextResult;
  };
  const result = await middleware[index]!(args, next);
  if (result !== undefined) return result as Response;
  return called ? nextResult! : next();
}
