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
// resealed: Set-Cookie headers of cookies sealed again with the first AUTH_SECRET value while
// answering (sealed-cookies.server.ts, ADR 109), for the root middleware to add; null until one is.
type Resealed = { name: string; setCookies: string[] };
// refusedCookies: the sealed cookie kinds already counted as refused on this request (one request
// reads its session cookie several times: the root, the page, the gate), null until one is.
type RequestContext = { reqId: string; flags: Set<Flag> | null; directWriter: boolean; resealed?: Resealed[] | null; refusedCookies?: Set<string> | null };
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

/** Holds a re-sealed cookie's Set-Cookie headers for this request's answer (ADR 109); outside a request, nothing. */
export function holdResealedCookie(name: string, setCookies: string[]): void {
  const context = requestContext.getStore();
  if (context) (context.resealed ??= []).push({ name, setCookies });
}

/** The re-sealed cookies held for this request's answer, handed over once. */
export function takeResealedCookies(): readonly Resealed[] {
  const context = requestContext.getStore();
  const held = context?.resealed;
  if (!held) return NONE;
  context.resealed = null;
  return held;
}
const NONE: readonly Resealed[] = Object.freeze([]);

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
