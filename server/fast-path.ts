// The production server's fast path for the auth JSON endpoints (docs/decisions/055-fast-path.md).
// GET /auth/session, /auth/csrf and /auth/providers and POST /auth/_log render nothing: React
// Router's request handler would parse and normalise the URL, look for a manifest request, match
// the route table, build a router context and a static handler query, and run the root middleware
// and the route's loader or action. Here the same route modules of the server build — the root
// middleware and the route's loader or action, the single definition the dev server and the
// tests use — run directly on the Request React Router's Node adapter would have built, and the
// answer goes out through the adapter's own writer, so status, headers and body are byte for byte
// what the full pipeline sends. Anything the fast path is not sure of (another path spelling, a
// .data request, another method) goes to React Router unchanged.
import { existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { createRequest, sendResponse } from "@remix-run/node-fetch-server";
import { RouterContextProvider, type ServerBuild } from "react-router";

/** Paths answered here: resource routes (no component, no error boundary) of the root. */
export const FAST_PATHS: readonly string[] = ["/auth/session", "/auth/csrf", "/auth/providers", "/auth/_log"];

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
      request = createRequest(req, res);
    } catch {
      return false;
    }
    void answer(route, (isLoader ? route.module.loader : route.module.action) as Handler, request, res);
    return true;
  }

  async function answer(route: FastRoute, handler: Handler, request: Request, res: ServerResponse) {
    const context = new RouterContextProvider();
    // What React Router hands a resource route's middleware and loader: `url` (the request's URL,
    // built only when read) and `pattern` (the matched path, here the path itself).
    const args = {
      request,
      params: {},
      context,
      pattern: route.path,
      get url() {
        return new URL(request.url);
      },
    } as unknown as HandlerArgs;
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
    if (res.destroyed || request.signal.aborted) return;
    try {
      await sendResponse(res, response);
    } catch (error) {
      if (!res.headersSent) {
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
    if (error instanceof Response) return error;
    handleError?.(error, { request: args.request, params: args.params, context: args.context });
    return new Response("Unexpected Server Error", { status: 500, headers: { "Content-Type": "text/plain" } });
  }
}

function asResponse(result: unknown): Response {
  if (result !== undefined) return result as Response;
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
