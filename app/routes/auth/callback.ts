import { useRouteError } from "react-router";
import { badRequest } from "~/auth/core";
import { isPageRequest, providerFlow, refusalAsPage } from "~/auth/signin";
import type { Route } from "./+types/callback";

// The protocol's endpoint. A client that does not ask for a page (JSON mode, fetch, an API client)
// gets every answer as providerFlow gives it, before rendering starts. A browser gets the
// redirects as they are, and a refusal (a form post too large or of another type, a bad request)
// as the error page in its language with a way back (app/root.tsx), as on /auth/signin.
export const middleware: Route.MiddlewareFunction[] = [
  async ({ request, params }, next) => {
    if (await isPageRequest(request)) return next();
    const method = request.method.toUpperCase();
    return method === "GET" || method === "HEAD" || method === "POST" ? providerFlow(request, params.provider, "callback") : badRequest();
  },
];

export const loader = async ({ request, params }: Route.LoaderArgs) => refusalAsPage(request, await providerFlow(request, params.provider, "callback"));
export const action = async ({ request, params }: Route.ActionArgs) =>
  refusalAsPage(request, request.method === "POST" ? await providerFlow(request, params.provider, "callback") : badRequest());

/** Never drawn: every answer is a redirect or a refusal the error page draws. */
export default function Callback() {
  return null;
}

/**
 * Passes the refusal up to the root's error page. Its own boundary, so that React Router still
 * runs the root loader (the page's language, who is signed in) above it after the action threw.
 */
export function ErrorBoundary(): never {
  throw useRouteError();
}
