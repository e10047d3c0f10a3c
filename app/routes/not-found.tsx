import { data } from "react-router";
import { metricsResponse } from "~/auth/core/metrics.server";
import { AdminClients, AdminUser, AdminUsers } from "~/components/admin-console";
import type { Route } from "./+types/not-found";
import { jsonRedirectMiddleware } from "~/auth/core/json-mode.server";
import { adminAction, adminJson, adminLoader, adminReauthJson, isAdminUrl } from "./admin-console.server";

const adminJsonMiddleware = jsonRedirectMiddleware(adminJson);

// GET /metrics (ADR 076) lives here, in the route every unknown URL reaches: a
// scraper with `Authorization: Bearer <METRICS_TOKEN>` gets the Prometheus text format; anyone
// else — no token, a wrong one, METRICS_TOKEN unset — gets this very 404 page, byte for byte
// (a route of its own would show its id in the page), so nobody learns the endpoint exists.
// /admin (ADR 085) lives here for the same reason: anyone but a signed-in admin gets this page.
// A JSON client's POST to an /admin action gets JSON before the page would render (ADR 085).
export const middleware: Route.MiddlewareFunction[] = [
  async ({ request, url }, next) => (request.method === "GET" && url.pathname === "/metrics" && (await metricsResponse(request))) || next(),
  // An admin's JSON client past the console's recent sign-in window: the 403 JSON, not a page (ADR 110).
  async ({ request, url }, next) => (isAdminUrl(url) && (await adminReauthJson(request))) || next(),
  async (args, next) => (args.request.method === "POST" && isAdminUrl(args.url) ? adminJsonMiddleware(args, next) : next()),
];

// Unmatched URLs (say /favicon.ico) get a plain 404 instead of a logged routing error.
export function loader({ request }: Route.LoaderArgs) {
  if (isAdminUrl(new URL(request.url))) return adminLoader(request);
  throw data("Not found", { status: 404 });
}

export function action({ request }: Route.ActionArgs) {
  if (isAdminUrl(new URL(request.url))) return adminAction(request);
  throw data("Not found", { status: 404 });
}

export function headers({ parentHeaders, loaderHeaders }: Route.HeadersArgs) {
  // /admin's pages show users, their sessions and events: no cache may keep a copy.
  const cacheControl = loaderHeaders.get("Cache-Control");
  if (!cacheControl) return parentHeaders;
  const headers = new Headers(parentHeaders);
  headers.set("Cache-Control", cacheControl);
  return headers;
}

export default function NotFound({ loaderData, actionData }: Route.ComponentProps) {
  if (!loaderData) return null;
  if (loaderData.page === "users") return <AdminUsers data={loaderData} />;
  const formError = actionData && "formError" in actionData ? String(actionData.formError) : null;
  if (loaderData.page === "clients") {
    const created = actionData && "created" in actionData ? actionData.created : null;
    return <AdminClients data={loaderData} created={created} formError={formError} />;
  }
  return <AdminUser data={loaderData} formError={formError} />;
}
