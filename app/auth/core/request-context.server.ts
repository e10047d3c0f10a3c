// What is known about the request being served, wherever the code runs (AsyncLocalStorage): its id
// for the log lines (docs/decisions/050) and the outages it met (docs/decisions/052). Set by
// server/main.ts for every request, or by the root middleware outside it.
import { AsyncLocalStorage } from "node:async_hooks";

/** databaseUnavailable: an outage was met (and logged); pageFailedOnDatabase: a loader or action threw it. */
type Flag = "databaseUnavailable" | "pageFailedOnDatabase";
type RequestContext = { reqId: string; flags: Set<Flag> };
const requestContext = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` so that everything it does, however deep and however late, sees this request's context. */
export function runWithRequestId<T>(reqId: string, fn: () => T): T {
  return requestContext.run({ reqId, flags: new Set() }, fn);
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.reqId;
}

export function markRequest(flag: Flag) {
  requestContext.getStore()?.flags.add(flag);
}

export function requestMarked(flag: Flag): boolean {
  return requestContext.getStore()?.flags.has(flag) ?? false;
}
