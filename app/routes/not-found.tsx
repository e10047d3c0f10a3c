import { data } from "react-router";
import { metricsResponse } from "~/auth/core/metrics.server";
import type { Route } from "./+types/not-found";

// GET /metrics (contract §18, ADR 076) lives here, in the route every unknown URL reaches: a
// scraper with `Authorization: Bearer <METRICS_TOKEN>` gets the Prometheus text format; anyone
// else — no token, a wrong one, METRICS_TOKEN unset — gets this very 404 page, byte for byte
// (a route of its own would show its id in the page), so nobody learns the endpoint exists.
export const middleware: Route.MiddlewareFunction[] = [
  async ({ request, url }, next) => (request.method === "GET" && url.pathname === "/metrics" && (await metricsResponse(request))) || next(),
];

// Unmatched URLs (say /favicon.ico) get a plain 404 instead of a logged routing error.
export function loader() {
  throw data("Not found", { status: 404 });
}

export function action() {
  throw data("Not found", { status: 404 });
}

export default function NotFound() {
  return null;
}
