import { data } from "react-router";
import type { Route } from "./+types/orgs-switch";
import { orgsJsonMiddleware, switchAction } from "./orgs.server";

// POST /orgs/switch: the session's active organization (docs/features/organizations.md), from the
// form on /orgs (no JavaScript needed) or a JSON client. Only a POST: anything else is 404.
export const middleware: Route.MiddlewareFunction[] = [orgsJsonMiddleware(null, (request) => switchAction(request))];

export function loader(): never {
  throw data("Not found", { status: 404 });
}

export const action = ({ request }: Route.ActionArgs) => switchAction(request);
