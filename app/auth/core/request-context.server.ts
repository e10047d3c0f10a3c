// What is known about the request being served, wherever the code runs (AsyncLocalStorage): its id
// for the log lines (docs/decisions/050) and the outages it met (docs/decisions/052). Set by
// server/main.ts for every request, or by the root middleware outside it.
import { AsyncLocalStorage } from "node:async_hooks";

/** databaseUnavailable: an outage was met (and logged); pageFailedOnDatabase: a loader or action threw it. */
type Flag = "databaseUnavailable" | "pageFailedOnDatabase";
// The flags' set only once one is marked: almost no request meets an outage, and every request
// has a context (docs/decisions/089).
// directWriter: the production server's fast path writes this request's answer to the socket
// itself (server/fast-path.ts): an answer's JSON text is handed over beside its Response rather
// than as a body stream built only to be read back (respond.server.ts).
// held: Set-Cookie headers the answer must carry even when the route that answers does not pass
// them on, for the root middleware to add; null until one is: cookies sealed again with the first
// AUTH_SECRET value while answering (sealed-cookies.server.ts, ADR 109) and the session cookie a
// read of the session re-issued (session.server.ts, ADR 118).
type Held = { name: string; setCookies: string[] };
// refusedCookies: the sealed cookie kinds already counted as refused on this request (one request
// reads its session cookie several times: the root, the page, the gate), null until one is.
// refusal: the JSON refusal a helper of ~/auth threw for a JSON client (ADR 118), for the root
// middleware to answer with when React Router rendered it as a page; null until one is thrown.
type RequestContext = { reqId: string; flags: Set<Flag> | null; directWriter: boolean; held?: Held[] | null; refusedCookies?: Set<string> | null; refusal?: Response | null };
const requestContext = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` so that everything it does, however deep and however late, sees this request's context. */
export function runWithRequestId<T>(reqId: string, fn: () => T): T {
  return requestContext.run({ reqId, flags: null, directWriter: false }, fn);
}

/**
 * Runs `fn` outside any request: for work that outlives the request that happened to start it (a
 * listener, a poll, a timer), so that its timers, sockets and log lines carry no request's id
 * (docs/decisions/106).
 */
export function outsideRequest<T>(fn: () => T): T {
  return requestContext.exit(fn);
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.reqId;
}

export function markRequest(flag: Flag) {
  const context = requestContext.getStore();
  if (context) (context.flags ??= new Set()).add(flag);
}

export function requestMarked(flag: Flag): boolean {
  return requestContext.getStore()?.flags?.has(flag) ?? false;
}

/** Said by the server's fast path before it runs a route: it writes the answer itself. */
export function answerWrittenDirectly(): void {
  const context = requestContext.getStore();
  if (context) context.directWriter = true;
}

/** True when the answer being built goes to the fast path's own writer (respond.server.ts). */
export function writtenDirectly(): boolean {
  return requestContext.getStore()?.directWriter === true;
}

/**
 * Holds the Set-Cookie headers of cookie `name` (possibly in chunks) for this request's answer
 * (ADR 109, 118); a later hold of the same name replaces an earlier one. Outside a request, nothing.
 */
export function holdAnswerCookies(name: string, setCookies: string[]): void {
  const context = requestContext.getStore();
  if (!context) return;
  const held = (context.held ??= []);
  const at = held.findIndex((h) => h.name === name);
  if (at >= 0) held.splice(at, 1);
  held.push({ name, setCookies });
}

/** The cookies held for this request's answer, handed over once. */
export function takeHeldCookies(): readonly Held[] {
  const context = requestContext.getStore();
  const held = context?.held;
  if (!held) return NONE;
  context.held = null;
  return held;
}
const NONE: readonly Held[] = Object.freeze([]);

/**
 * True the first time a refused cookie of `kind` is noted on this request, false after: a refusal
 * is counted once per request and cookie kind (ADR 109). Outside a request, always true.
 */
export function firstRefusalOnRequest(kind: string): boolean {
  const context = requestContext.getStore();
  if (!context) return true;
  const seen = (context.refusedCookies ??= new Set());
  if (seen.has(kind)) return false;
  seen.add(kind);
  return true;
}

/** Notes the JSON refusal being thrown for this request (ADR 118); the last one wins. Outside a request, nothing. */
export function holdRefusal(response: Response): void {
  const context = requestContext.getStore();
  if (context) context.refusal = response;
}

/** The JSON refusal thrown for this request, handed over once. */
export function takeRefusal(): Response | null {
  const context = requestContext.getStore();
  const refusal = context?.refusal ?? null;
  if (context) context.refusal = null;
  return refusal;
}
