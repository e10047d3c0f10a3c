// Which failures mean "the database cannot be used right now" (docs/decisions/052):
// refused or cut connections, connections or queries slower than DATABASE_TIMEOUT_MS, a pool with
// no free connection in time, a transaction that could not start or outlived its time. Everything
// else — a constraint violation, a bug — is not an outage. One list, read by core/outage.server.ts.

/** Prisma's codes for an unreachable, closed or timed-out database, pool or transaction. */
const PRISMA_OUTAGE_CODES = new Set(["P1001", "P1002", "P1008", "P1011", "P1017", "P2024", "P2028"]);
/** Node's socket errors. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/** The driver adapter's kinds (DriverAdapterError.cause.kind) for the same. */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "DatabaseDoesNotExist"]);
/** What pg and pg-pool say when they give up (their errors carry no code); pg.Client's connect timeout says "timeout expired". */
const DRIVER_MESSAGES =
  /Query read timeout|timeout exceeded when trying to connect|timeout expired|Connection terminated|Connection ended unexpectedly|Client has encountered a connection error|connect ECONNREFUSED|Can't reach database server|Server has closed the connection|Transaction already closed|Unable to start a transaction/i;

/**
 * Failures the app already put down to another service (an OAuth provider, the SMTP server): a
 * refused connection under one of these is that service's, never the database's, and keeps the
 * error code its caller gave it (OAuthCallback, EmailSignin).
 */
const OTHER_SERVICE_ERRORS = new Set(["OutboundError", "MailError"]);

export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current; depth++) {
    if (typeof current !== "object") return typeof current === "string" && DRIVER_MESSAGES.test(current);
    const e = current as { name?: unknown; code?: unknown; kind?: unknown; message?: unknown; cause?: unknown; errorCode?: unknown };
    if (typeof e.name === "string" && OTHER_SERVICE_ERRORS.has(e.name)) return false;
    if (e.name === "PrismaClientInitializationError" || e.name === "DatabaseUnavailableError") return true;
    for (const code of [e.code, e.errorCode]) {
      if (typeof code === "string" && (PRISMA_OUTAGE_CODES.has(code) || SOCKET_CODES.has(code))) return true;
    }
    if (typeof e.kind === "string" && ADAPTER_KINDS.has(e.kind)) return true;
    if (typeof e.message === "string" && DRIVER_MESSAGES.test(e.message)) return true;
    current = e.cause;
  }
  return false;
}
