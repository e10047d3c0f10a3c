// `npm start`: the production build on node:http — React Router's request listener plus sirv for
// the built assets. No framework server; an access line per request only with LOG_REQUESTS=true (docs/decisions/050).
// First: when started without the memory limits, the process restarts itself with them.
import "./memory-limits.ts";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { enableCompileCache } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ServerBuild } from "react-router";
import type * as ServerEntry from "../app/entry.server.tsx";

/** A request as node:http hands it to a server: the target and method are always there. */
type ServerRequest = IncomingMessage & { url: string; method: string };

// Node keeps the compiled code of every module loaded from here on in its on-disk cache (the
// system's temporary folder, or NODE_COMPILE_CACHE), so a restart skips most of the parsing and
// compiling of the app and its dependencies (docs/decisions/057).
enableCompileCache?.();

// Before React loads: its CommonJS entry picks the development or production build from
// NODE_ENV at first require, and every copy in the process must agree.
process.env.NODE_ENV ??= "production";
const { createRequestListener } = await import("@react-router/node");
const { default: sirv } = await import("sirv");
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

// The build is plain JavaScript made by `npm run build`; the server sees the app only through its
// entry module, whose exports are typed from app/entry.server.tsx. Loaded first, so that every line
// the process writes, a failed start and a crash included, is a JSON line of the app's logger
// (docs/decisions/050, 106).
const build: ServerBuild = await import(path.join(root, "build/server/index.js")).catch((error: unknown): never => {
  // No logger without the build: one line of the same shape, by hand.
  const message = `Startup failed: the production build could not be loaded (npm run build): ${(error as Error)?.message ?? error}`;
  console.log(JSON.stringify({ level: "error", time: new Date().toISOString(), event: "startup-failed", message, msg: "startup-failed" }));
  process.exit(1);
});
const entry = build.entry.module as unknown as typeof ServerEntry;
/** A line of the app's logger; one of the same shape by hand when the log settings themselves are wrong. */
function logLine(level: "error" | "warn" | "info", event: string, fields: Record<string, unknown>) {
  try {
    entry.log(level, event, fields);
  } catch {
    const { error, ...rest } = fields;
    const cause = error instanceof Error ? { name: error.name, message: error.message } : error;
    console.log(JSON.stringify({ level, time: new Date().toISOString(), event, ...rest, ...(cause === undefined ? {} : { error: cause }), msg: event }));
  }
}
/** A start that cannot go on: the reason (a ConfigError names each variable; no stack trace), exit 1. */
function startupFailed(caught: unknown): never {
  const error = caught as Error | undefined;
  const isConfig = error?.name === "ConfigError";
  logLine("error", "startup-failed", {
    message: isConfig ? error!.message : `Startup failed: ${error?.message ?? error}`,
    error: isConfig ? undefined : error,
  });
  process.exit(1);
}
const invalidSetting = (problem: string): never => startupFailed(Object.assign(new Error(`Invalid configuration:\n  - ${problem}`), { name: "ConfigError" }));
// The settings file, before any other setting is read (ADR 113): the one VESTIBULE_ENV_FILE names,
// else the project's .env when there is one; a variable already in the environment wins. A
// malformed line stops the start naming the file and the line. (NODE_ENV is settled above, before
// React loads: `npm start` is production unless the environment itself says otherwise.)
try {
  entry.loadCommandEnvFile(process.env, root);
} catch (caught) {
  startupFailed(caught);
}
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "0.0.0.0";

// A crash (an exception or a rejection nobody handled): one JSON line with the error and its stack,
// then exit 1, as node would, but never as plain text in the JSON log.
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (caught: unknown) => {
    logLine("error", "crashed", { error: caught, stack: caught instanceof Error ? caught.stack : undefined, origin: event });
    process.exit(1);
  });
}

// How long SIGTERM/SIGINT waits for requests in flight (docs/decisions/032).
// Checked before the server starts, so a typo stops the start instead of surfacing at the next deploy.
const SHUTDOWN_TIMEOUT_DEFAULT_MS = 10_000;
const SHUTDOWN_TIMEOUT_MAX_MS = 600_000;
const shutdownTimeoutMs = (() => {
  const raw = process.env.SHUTDOWN_TIMEOUT_MS?.trim();
  if (!raw) return SHUTDOWN_TIMEOUT_DEFAULT_MS;
  const value = /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (value >= 1 && value <= SHUTDOWN_TIMEOUT_MAX_MS) return value;
  return invalidSetting(`SHUTDOWN_TIMEOUT_MS must be a whole number of milliseconds from 1 to ${SHUTDOWN_TIMEOUT_MAX_MS} (default ${SHUTDOWN_TIMEOUT_DEFAULT_MS})`);
})();
// The fast path for the auth JSON endpoints (server/fast-path.ts, docs/decisions/055) is on
// unless VESTIBULE_FAST_PATH=off: the test that compares both paths, and a way to rule it out.
const fastPathOn = (() => {
  const raw = process.env.VESTIBULE_FAST_PATH?.trim();
  if (!raw || raw === "on") return true;
  if (raw === "off") return false;
  return invalidSetting("VESTIBULE_FAST_PATH must be on or off (default on)");
})();
const shutdownDrainMs = readShutdownDrainMs(shutdownTimeoutMs);
const { createFastPath } = await import("./fast-path.ts");

let config: ReturnType<typeof entry.prepareServer>;
try {
  config = entry.prepareServer();
} catch (caught) {
  startupFailed(caught);
}

const assets = sirv(path.join(root, "build/client"), {
  etag: true,
  setHeaders(res, pathname) {
    if (pathname.startsWith("/assets/")) res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
    else publicFileHeaders(res, pathname);
  },
});
// public/ (the site icon): fixed names, not fingerprinted, so cached long but not for ever; sirv's
// type table has no .ico.
function publicFileHeaders(res: ServerResponse, pathname: string): void {
  res.setHeader("Cache-Control", "public, max-age=604800");
  if (pathname.endsWith(".ico")) res.setHeader("Content-Type", "image/x-icon");
}
const handle = createRequestListener({ build, mode: process.env.NODE_ENV });
const fastPath = fastPathOn ? createFastPath(build, { clientDirectory: path.join(root, "build/client") }) : () => false;
// nosniff, Referrer-Policy, X-Frame-Options, COOP, HSTS on https: set first on every answer, so
// the probes, the refusals below and the static assets carry them as React Router's answers do.
const securityHeaders = Object.entries(entry.baseSecurityHeaders(config));

// A Host header that is not a host (say "[" or "a b") makes building the request URL throw
// inside the listener: a 500 and a stack trace on stderr per request. Refuse it up front. The
// pattern keeps the shape (a name or a bracketed address, an optional port); the URL parser the
// listener uses then decides the rest — a port over 65535, "[1::2::3]", "[1.2.3.4]" or
// "999.999.999.999" have the shape but are no host.
const HOST_HEADER = /^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;
const isHost = (value: string) => HOST_HEADER.test(value) && URL.canParse(`http://${value}`);

// Probes answered here, before React Router: load balancers and orchestrators ask every few
// seconds, and neither answer needs a route, a session or the Host header (docs/decisions/031).
// What /readyz last answered, so that a change is logged once rather than at every probe.
let readiness: string = "ready";
type ProbeAnswer = { status: number; body: Record<string, string | undefined> };
const PROBES: Record<string, () => Promise<ProbeAnswer>> = {
  "/healthz": async () => ({ status: 200, body: { status: "ok" } }),
  "/readyz": async () => {
    const result = migrated ? await entry.checkReadiness() : await notMigratedYet();
    const now = result.ready ? "ready" : result.reason;
    if (now !== readiness) entry.log(result.ready ? "info" : "warn", "readiness-changed", { readiness: now, error: result.ready ? undefined : result.error });
    readiness = now;
    return result.ready
      ? { status: 200, body: { status: "ready" } }
      : { status: 503, body: { status: "unavailable", reason: result.reason } };
  },
};

// Which process answered, on every probe answer: the unit's readiness check (deploy/wait-ready.sh)
// accepts only the process systemd started, never another one still holding the port (ADR 106).
const INSTANCE_PID_HEADER = "X-Instance-Pid";
function answerProbe(req: ServerRequest, res: ServerResponse, probe: () => Promise<ProbeAnswer>) {
  const headers = { "Content-Type": "application/json", "Cache-Control": "no-store", [INSTANCE_PID_HEADER]: String(process.pid) };
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { ...headers, Allow: "GET, HEAD" });
    res.end(JSON.stringify({ status: "method-not-allowed" }));
    return;
  }
  void probe().then(({ status, body }) => {
    res.writeHead(status, headers);
    res.end(req.method === "HEAD" ? undefined : JSON.stringify(body));
  });
}

// Responses not finished yet: at shutdown each is told to close its connection when it is done.
const inFlight = new Set<ServerResponse>();
let shuttingDown = false;

function badRequest(res: ServerResponse) {
  res.writeHead(400, { "Content-Type": "application/json" });
  res.end(JSON.stringify("Bad request."));
}

// Which request target forms reach the app (RFC 9112 §3.2; docs/decisions/033). React Router
// builds the request URL from Host + target, which throws — a 500 and a stack trace — for anything
// but a path. `OPTIONS *` asks about the server itself: 204 with the methods it takes. An
// absolute-form target is a proxy's form: served as its path when it names the host the Host
// header names (RFC 9112 lets a server take it), 400 otherwise — we are nobody's proxy.
// Returns false when the request has been answered.
function toOriginForm(req: ServerRequest, res: ServerResponse) {
  if (req.url.startsWith("/")) return true;
  if (req.url === "*") {
    if (req.method === "OPTIONS") {
      res.writeHead(204, { Allow: "GET, HEAD, POST" });
      res.end();
    } else badRequest(res);
    return false;
  }
  const target = URL.parse(req.url);
  const host = req.headers.host?.toLowerCase();
  if (!target || (target.protocol !== "http:" && target.protocol !== "https:") || target.username || target.password || target.host !== host) {
    badRequest(res);
    return false;
  }
  req.url = `${target.pathname}${target.search}`;
  return true;
}

// Methods React Router can take: the rest get 405 with the methods we take, before it. Of those,
// the Fetch standard forbids TRACE (and CONNECT, TRACK, which Node stops itself): the Request that
// React Router is handed cannot carry it, and its constructor throws — a 500 and a stack trace on
// stderr per request. The others Node parses (PROPFIND, SEARCH, PURGE, QUERY, …) reached a
// resource route as React Router's 405 saying "Unexpected Server Error". Pages answer these
// methods' cousins (PUT, OPTIONS, …) with their own 405 page (app/entry.server.tsx).
const ROUTER_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
function methodNotAllowed(res: ServerResponse) {
  res.writeHead(405, { "Content-Type": "application/json", Allow: "GET, HEAD, POST" });
  res.end(JSON.stringify("Method not allowed."));
}

// Request line plus headers, cookies included: larger blocks get node's own 431.
// 16 KiB is also node's default; written out so a runtime flag cannot raise it.
const MAX_HEADER_BYTES = 16 * 1024;

// Lingering close (RFC 9112 §9.6). Node closes a connection whose request body was not read to
// the end (a body refused with 413 while it still arrives) as soon as the answer is written; with
// bytes still coming in, that close is a TCP reset, which can reach the client before it has read
// the answer (it sees EPIPE/ECONNRESET, not the 413). Instead: send FIN after the answer, throw
// away what still arrives — nothing is kept — and close for good when the client does or after
// LINGER_MS. docs/decisions/024.
const LINGER_MS = 2_000;
function lingerOnClose(socket: Socket & { vestibuleLinger?: boolean; destroySoon?: () => void }) {
  if (socket.vestibuleLinger) return;
  socket.vestibuleLinger = true;
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end();
    this.on("data", () => {});
    this.resume();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once("close", () => clearTimeout(timer));
  };
}

// Every request gets an id — the client's or proxy's X-Request-Id when well-formed, else a new
// one — echoed in the answer and carried by every line logged while it is served, probes and
// refusals included; with LOG_REQUESTS=true one access line follows each answer (docs/decisions/050).
const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (incoming, res) => {
  const req = incoming as ServerRequest;
  const header = req.headers["x-request-id"];
  const reqId = entry.requestIdFrom(typeof header === "string" ? header : undefined);
  res.setHeader(entry.REQUEST_ID_HEADER, reqId);
  // The access line's listener only when there is one to write: a closure and a listener per
  // request otherwise (docs/decisions/069).
  if (entry.accessLogEnabled()) {
    const started = performance.now();
    res.once("finish", () =>
      entry.runWithRequestId(reqId, () =>
        entry.logRequest({ method: req.method, url: req.url, status: res.statusCode, durationMs: performance.now() - started }),
      ),
    );
  }
  entry.runWithRequestId(reqId, () => serve(req, res));
});

function serve(req: ServerRequest, res: ServerResponse) {
  lingerOnClose(req.socket);
  inFlight.add(res);
  res.once("close", () => inFlight.delete(res));
  if (shuttingDown) res.setHeader("Connection", "close");
  for (const [name, value] of securityHeaders) res.setHeader(name, value);
  if (refusedWhileDraining(req, res)) return;
  // Looked up only for a target that can be a probe: no string or array per request otherwise.
  const probe = req.url.startsWith("/healthz") || req.url.startsWith("/readyz") ? PROBES[req.url.split("?", 1)[0]!] : undefined;
  if (probe) return answerProbe(req, res, probe);
  if (!migrated) return waitingForDatabase(req, res);
  if (!isHost(req.headers.host ?? "")) return badRequest(res);
  if (!toOriginForm(req, res)) return;
  if (!ROUTER_METHODS.has(req.method)) return methodNotAllowed(res);
  // The TCP peer, for the client address (rate limits, audit, sessions): only ever the socket's,
  // never a header a client sent. app/auth/client-address.server.ts normalises it and decides,
  // from AUTH_TRUSTED_PROXIES, whether this peer's X-Forwarded-For is believed.
  req.headers["x-vestibule-remote-addr"] = req.socket.remoteAddress ?? "";
  if (fastPath(req, res)) return;
  // The OAuth provider's endpoints and metadata (AUTH_PROVIDER=true), before React Router.
  if (entry.isEnginePath(req.url.split("?", 1)[0]!)) return void entry.handleEngineRequest(req, res);
  if (req.method === "GET" || req.method === "HEAD") assets(req, res, () => handle(req, res));
  else handle(req, res);
}
server.keepAliveTimeout = 65_000;

// Every connection, and whether it has carried a request: at shutdown, one that never did (a
// proxy's or browser's connection opened ahead of need) is closed with the idle ones — node's
// closeIdleConnections() leaves it, and server.close() then waits for it until SHUTDOWN_TIMEOUT_MS
// (ADR 106).
const connections = new Set<Socket & { vestibuleUsed?: boolean }>();
server.on("connection", (socket: Socket) => {
  connections.add(socket);
  socket.once("close", () => connections.delete(socket));
});
server.on("request", (req: IncomingMessage) => {
  (req.socket as Socket & { vestibuleUsed?: boolean }).vestibuleUsed = true;
});
function closeUnusedConnections() {
  for (const socket of connections) if (!socket.vestibuleUsed) socket.destroy();
}

// The port taken (another instance, an old process still running) or not ours to take: said as a
// log line, and the start fails — never a second process beside the first (ADR 106).
server.once("error", (error) => {
  logLine("error", "server-listen-failed", { port, host, error, message: `cannot listen on ${host}:${port}: ${(error as NodeJS.ErrnoException).code ?? error.message}` });
  process.exit(1);
});

// The migrations before anything but the probes is served. A database that does not answer yet
// (an outage, PostgreSQL starting after us) does not stop the start: the instance listens, /readyz
// says `database`, other requests get 503, and the migrations are tried again until they run
// (ADR 106). Any other failure (a migration that fails) stops the start.
let migrated = false;
let stopCleanup = () => {};
let stopMailSender = () => {};
let stopBackchannelSender = () => {};
const MIGRATE_RETRY_FIRST_MS = 500;
const MIGRATE_RETRY_MAX_MS = 5_000;
let waitingSince: number | null = null;
async function migrateWhenTheDatabaseAnswers({ firstTryOnly = false } = {}): Promise<void> {
  let delay = MIGRATE_RETRY_FIRST_MS;
  for (;;) {
    try {
      await entry.migrateDatabase((line) => entry.log("info", "migrate", { detail: line }));
      break;
    } catch (error) {
      if (!entry.isDatabaseUnavailable(error)) startupFailed(error);
      if (waitingSince === null) {
        waitingSince = Date.now();
        entry.log("warn", "database-waiting", { error, message: "the database does not answer: listening, not ready until it does" });
      }
      if (firstTryOnly || shuttingDown) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, MIGRATE_RETRY_MAX_MS);
    }
  }
  if (waitingSince !== null) entry.log("info", "database-reached", { waitedMs: Date.now() - waitingSince, message: "migrated: ready" });
  migrated = true;
  if (shuttingDown) return;
  // Expired rows go every hour, the first time a few minutes after the start (docs/decisions/051).
  stopCleanup = entry.scheduleCleanup();
  // Queued security e-mails go out from every instance, each row from one (docs/decisions/059).
  stopMailSender = entry.startMailSender();
  // Back-channel logout tokens go out the same way, while the OAuth provider is on (docs/decisions/145).
  stopBackchannelSender = entry.startBackchannelSender();
}
async function notMigratedYet(): Promise<Awaited<ReturnType<typeof entry.checkReadiness>>> {
  const result = await entry.checkReadiness();
  return result.ready ? { ready: false, reason: "migrations" } : result;
}
/** Before the migrations ran: everything but the probes is 503 (a page or JSON), to be asked again shortly. */
function waitingForDatabase(req: ServerRequest, res: ServerResponse) {
  const answer = entry.startupOutageAnswer(req);
  res.writeHead(answer.status, answer.headers);
  res.end(req.method === "HEAD" ? undefined : answer.body);
}

// A database that answers: migrated before the listener opens, however long that takes.
await migrateWhenTheDatabaseAnswers({ firstTryOnly: true });
if (!migrated) void migrateWhenTheDatabaseAnswers();
// The OAuth provider never starts with the library's development shortcuts (ADR 133).
if (migrated) await entry.assertEngineSafe().catch(startupFailed);
server.listen(port, host, () => {
  const address = server.address();
  const shown = typeof address === "object" && address ? `http://${host === "0.0.0.0" ? "localhost" : host}:${address.port}` : String(address);
  entry.log("info", "server-listening", { url: shown, message: `Vestibule listening on ${shown}` });
});

// Draining (docs/decisions/066): for SHUTDOWN_DRAIN_MS after SIGTERM/SIGINT the listener stays
// open, /readyz answers 503 "shutdown", and GET/HEAD/OPTIONS are answered 503 with Retry-After —
// a proxy retries those on another instance (nginx: proxy_next_upstream http_503) and takes this
// one out of rotation — while a POST is still served here, since a proxy never resends one. Only
// then does the listener close, when no new requests come, so no connection waiting in the
// accept queue is reset. 0 (the default) closes the listener at once, as before.
let draining = false;
function readShutdownDrainMs(timeoutMs: number): number {
  const raw = process.env.SHUTDOWN_DRAIN_MS?.trim();
  if (!raw) return 0;
  const value = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (value >= 0 && value < timeoutMs) return value;
  return invalidSetting(`SHUTDOWN_DRAIN_MS must be a whole number of milliseconds from 0 to less than SHUTDOWN_TIMEOUT_MS (${timeoutMs})`);
}
async function drainBeforeClosing(): Promise<void> {
  if (shutdownDrainMs === 0) return;
  draining = true;
  entry.log("info", "shutdown-draining", { drainMs: shutdownDrainMs });
  await new Promise((resolve) => setTimeout(resolve, shutdownDrainMs));
}
const SENT_ELSEWHERE_WHILE_DRAINING = new Set(["GET", "HEAD", "OPTIONS"]);
/** Answers what a draining instance does not serve; false for what it still serves. */
function refusedWhileDraining(req: ServerRequest, res: ServerResponse): boolean {
  if (!draining) return false;
  const path = req.url.split("?", 1)[0]!;
  if (path === "/healthz") return false;
  if (path !== "/readyz" && !SENT_ELSEWHERE_WHILE_DRAINING.has(req.method)) return false;
  res.writeHead(503, { "Content-Type": "application/json", "Cache-Control": "no-store", "Retry-After": "1", Connection: "close", [INSTANCE_PID_HEADER]: String(process.pid) });
  res.end(req.method === "HEAD" ? undefined : JSON.stringify(path === "/readyz" ? { status: "unavailable", reason: "shutdown" } : "Service unavailable."));
  return true;
}

// SIGTERM/SIGINT: stop listening (new connections are refused), close idle keep-alive
// connections, let requests in flight finish — each answer closes its connection — then close the
// database pool and exit 0. At SHUTDOWN_TIMEOUT_MS whatever is still running is cut off (its
// connection closed without an answer), the pool is closed and the exit is 0 too: the deadline is
// the configured end of a stop, not a failure. docs/decisions/032, 106.
// The signal comes from systemd (KillMode=mixed: to this process alone), docker stop, Kubernetes,
// or npm, which forwards it (`npm start` execs node, so node is npm's child). A second signal
// during the stop exits 1 at once — except the same signal again within SAME_STOP_MS: Ctrl-C under
// `npm start` reaches node twice, from the terminal and forwarded by npm, and that is one stop.
const SAME_STOP_MS = 1_000;
let stopping: { signal: NodeJS.Signals; at: number } | null = null;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (!stopping) {
      stopping = { signal, at: Date.now() };
      shutdown(signal).then(
        () => process.exit(0),
        (error: unknown) => {
          entry.log("error", "shutdown-failed", { error });
          process.exit(1);
        },
      );
      return;
    }
    if (signal === stopping.signal && Date.now() - stopping.at < SAME_STOP_MS) return;
    entry.log("warn", "shutdown-forced", { signal, cutOff: inFlight.size });
    process.exit(1);
  });
}

async function shutdown(signal: NodeJS.Signals): Promise<void> {
  shuttingDown = true;
  stopCleanup();
  stopMailSender();
  stopBackchannelSender();
  entry.log("info", "shutdown-started", { signal, inFlight: inFlight.size, timeoutMs: shutdownTimeoutMs });
  await drainBeforeClosing();
  const closed = new Promise((resolve) => server.close(resolve));
  closeUnusedConnections();
  for (const res of inFlight) {
    if (!res.headersSent) res.setHeader("Connection", "close");
    // An answer already streaming keeps its connection: close it once idle.
    res.once("finish", () => setImmediate(() => server.closeIdleConnections()));
  }
  let deadline: NodeJS.Timeout | undefined;
  // The drain counts toward the deadline: the stop ends SHUTDOWN_TIMEOUT_MS after the signal.
  const timedOut = new Promise<"timed-out">((resolve) => (deadline = setTimeout(resolve, shutdownTimeoutMs - shutdownDrainMs, "timed-out")));
  if ((await Promise.race([closed, timedOut])) === "timed-out") {
    entry.log("warn", "shutdown-timed-out", { timeoutMs: shutdownTimeoutMs, cutOff: inFlight.size });
    server.closeAllConnections();
  }
  clearTimeout(deadline);
  await entry.closeDb();
  entry.log("info", "shutdown-complete", {});
}
