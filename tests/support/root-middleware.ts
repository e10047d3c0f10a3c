// The app's root middlewares (app/root.tsx), in order, around a route's loader or action — what
// React Router runs for a request, without the rest of its pipeline (tests that need matching,
// .data requests or rendering use tests/support/app-handler.ts).
import { middleware } from "../../app/root";
import { callRoute, routeArgs } from "./http";

export function runWithRootMiddleware(fn: (args: any) => unknown, request: Request, params: Record<string, string> = {}): Promise<Response> {
  const args = routeArgs(request, params);
  const chain = (i: number): Promise<Response> =>
    i === middleware.length ? callRoute(fn, request, params) : Promise.resolve(middleware[i]!(args as never, () => chain(i + 1)) as Promise<Response>);
  return chain(0);
}
