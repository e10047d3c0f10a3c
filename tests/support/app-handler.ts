// The whole app as one in-process Request → Response function: React Router's own request
// handler (createRequestHandler, in production mode as server/main.ts runs it) over a server
// build assembled from app/routes.ts, app/root.tsx and app/entry.server.tsx. Requests go through
// the framework's pipeline — route matching, middleware, loaders and actions, the 405 for a
// method a route does not take, .data requests, document rendering and error boundaries — with
// no build step and no socket. Only the browser assets are missing (the manifest names module
// URLs that nothing serves), which a server-side test never fetches.
import path from "node:path";
import { fileURLToPath } from "node:url";
import reactRouterConfig from "../../react-router.config.ts";
import {
  createRequestHandler,
  type ServerBuild,
  UNSAFE_withComponentProps,
  UNSAFE_withErrorBoundaryProps,
  UNSAFE_withHydrateFallbackProps,
} from "react-router";

const appDirectory = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../app");

type RouteConfigEntry = { id?: string; path?: string; index?: boolean; caseSensitive?: boolean; file: string; children?: RouteConfigEntry[] };
type RouteModule = Record<string, unknown> & { loader?: unknown; action?: unknown; ErrorBoundary?: unknown };
type Component = Parameters<typeof UNSAFE_withComponentProps>[0];

/**
 * What the Vite plugin does to every route module: the default export, ErrorBoundary and
 * HydrateFallback receive loaderData, actionData, params and error as props.
 */
function withProps(module: Record<string, unknown>): RouteModule {
  const wrapped: RouteModule = { ...module };
  if (typeof module.default === "function") wrapped.default = UNSAFE_withComponentProps(module.default as Component);
  if (typeof module.ErrorBoundary === "function") wrapped.ErrorBoundary = UNSAFE_withErrorBoundaryProps(module.ErrorBoundary as never);
  if (typeof module.HydrateFallback === "function") wrapped.HydrateFallback = UNSAFE_withHydrateFallbackProps(module.HydrateFallback as never);
  return wrapped;
}

/** The route id React Router's Vite plugin gives a file: its path under app/ without the extension. */
const routeId = (file: string) => file.replace(/\.[a-z0-9]+$/i, "");

async function loadBuild(): Promise<ServerBuild> {
  const { default: config } = (await import("../../app/routes.ts")) as { default: RouteConfigEntry[] };
  const entry = await import("../../app/entry.server.tsx");
  const root = withProps(await import("../../app/root.tsx"));

  const flat: { id: string; parentId: string; entry: RouteConfigEntry }[] = [];
  const walk = (entries: RouteConfigEntry[], parentId: string) => {
    for (const e of entries) {
      const id = e.id ?? routeId(e.file);
      flat.push({ id, parentId, entry: e });
      walk(e.children ?? [], id);
    }
  };
  walk(config, "root");

  const modules = new Map<string, RouteModule>([["root", root]]);
  for (const { id, entry: e } of flat) modules.set(id, withProps(await import(/* @vite-ignore */ path.join(appDirectory, e.file))));

  const routes: ServerBuild["routes"] = {
    root: { id: "root", path: "", module: root as never },
  };
  const assetRoutes: ServerBuild["assets"]["routes"] = { root: assetRoute("root", undefined, { path: "" }, root) };
  for (const { id, parentId, entry: e } of flat) {
    const shape = { path: e.path, index: e.index, caseSensitive: e.caseSensitive };
    routes[id] = { id, parentId, ...shape, module: modules.get(id) as never };
    assetRoutes[id] = assetRoute(id, parentId, shape, modules.get(id)!);
  }

  return {
    entry: { module: entry as never },
    routes,
    assets: { entry: { module: "/assets/entry.client.js", imports: [] }, routes: assetRoutes, url: "/assets/manifest.js", version: "test" },
    publicPath: "/",
    assetsBuildDirectory: path.resolve(appDirectory, "../build/client"),
    future: {},
    // As react-router.config.ts: React Router's own Origin check gives way to the app's.
    allowedActionOrigins: reactRouterConfig.allowedActionOrigins,
    ssr: true,
    isSpaMode: false,
    prerender: [],
    routeDiscovery: { mode: "lazy", manifestPath: "/__manifest" },
  };
}

function assetRoute(id: string, parentId: string | undefined, shape: { path?: string; index?: boolean; caseSensitive?: boolean }, module: RouteModule) {
  return {
    id,
    parentId,
    ...shape,
    hasAction: typeof module.action === "function",
    hasLoader: typeof module.loader === "function",
    hasClientAction: false,
    hasClientLoader: false,
    hasClientMiddleware: false,
    hasErrorBoundary: typeof module.ErrorBoundary === "function",
    module: `/assets/${id}.js`,
    imports: [],
    clientActionModule: undefined,
    clientLoaderModule: undefined,
    clientMiddlewareModule: undefined,
    hydrateFallbackModule: undefined,
  };
}

let handler: Promise<(request: Request) => Promise<Response>> | null = null;

/** The app's request handler (built once per test file), as the production server calls it. */
export function appHandler(): Promise<(request: Request) => Promise<Response>> {
  handler ??= loadBuild().then((build) => {
    const handle = createRequestHandler(build, "production");
    return (request: Request) => handle(request);
  });
  return handler;
}
