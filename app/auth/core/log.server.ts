// One structured JSON line per event on stdout: `time`, `level`, `msg` (the event's
// name, also kept as `event`), `reqId` while a request is served, then the event's fields. Causes
// of failures are logged here and nowhere else: responses carry only error codes.
//
// Nothing secret may reach a line (docs/decisions/050): fields named like a secret are censored
// by pino's redaction, and every string is scrubbed of URL parameters that carry one (an e-mailed
// link's token, an OAuth code or state), since messages and causes can quote a URL.
import { randomUUID } from "node:crypto";
import pino, { type Logger } from "pino";
import { logSettings, type LogSettings } from "./config.server";
import { ERROR_PAGES, OTHER_SIGNIN_ERROR_CODES, SIGNIN_ERROR_MESSAGES } from "./errors";
import { currentRequestId, runWithRequestId } from "./request-context.server";

export { currentRequestId, runWithRequestId };

type Level = "error" | "warn" | "info" | "debug";

// ---- Request ids -------------------------------------------------------------------------------

export const REQUEST_ID_HEADER = "X-Request-Id";

/**
 * A request id a client or proxy may choose: 1 to 128 characters of letters, digits and `._:-` —
 * enough for a UUID, a W3C trace id or a load balancer's `Root=1-…` style, and nothing that could
 * split a log line or a header.
 */
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The incoming X-Request-Id when it is well-formed, else a new one. */
export function requestIdFrom(header: string | null | undefined): string {
  return header && WELL_FORMED_REQUEST_ID.test(header) ? header : randomUUID();
}


// ---- Redaction ---------------------------------------------------------------------------------

/** Field names that hold a secret wherever they appear (top level or one object down). */
const SECRET_KEYS = [
  "password",
  "newPassword",
  "currentPassword",
  "token",
  "csrfToken",
  "sessionToken",
  "accessToken",
  "refreshToken",
  "idToken",
  "access_token",
  "refresh_token",
  "id_token",
  "code_verifier",
  "codeVerifier",
  "secret",
  "clientSecret",
  "client_secret",
  "cookie",
  "cookies",
  "set-cookie",
  "authorization",
  "Authorization",
  "code",
];
const SECRET_KEY_SET = new Set(SECRET_KEYS);
const REDACT_PATHS = SECRET_KEYS.flatMap((key) => {
  const safe = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
  const nested = safe.startsWith("[") ? `*${safe}` : `*.${safe}`;
  return [safe, nested, `headers${safe.startsWith("[") ? safe : `.${safe}`}`];
});
export const REDACTED = "[redacted]";

/**
 * `code` names our error codes  and next-auth's client error codes (SCREAMING_CASE),
 * which are no secret and are what an operator searches for; any other value under `code` — an
 * OAuth authorization code, an e-mailed code — is censored.
 */
const ERROR_CODES = new Set<string>([...Object.keys(SIGNIN_ERROR_MESSAGES), ...Object.keys(ERROR_PAGES), ...OTHER_SIGNIN_ERROR_CODES]);
function censor(value: unknown, path: string[]): unknown {
  if (path[path.length - 1] === "code" && typeof value === "string" && (ERROR_CODES.has(value) || /^[A-Z][A-Z0-9_]{0,63}$/.test(value))) {
    return value;
  }
  return REDACTED;
}

/** URL parameters whose value is a secret: e-mail link tokens, OAuth codes and state, passwords. */
const SECRET_PARAMS = /([?&#;](?:token|code|state|code_verifier|access_token|refresh_token|id_token|password|csrfToken|client_secret)=)[^&#\s"'<>]*/gi;

/** `text` with every secret URL parameter's value replaced; other text unchanged. */
export function scrubSecrets(text: string): string {
  return text.includes("=") ? text.replace(SECRET_PARAMS, `$1${REDACTED}`) : text;
}

/** Errors become {name, message, cause}; every string is scrubbed. Depth-limited: a log line is no dump. */
function sanitize(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubSecrets(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > 4) return "[…]";
  if (value instanceof Error) {
    return {
      name: value.name,
      message: scrubSecrets(value.message),
      ...("code" in value && typeof value.code === "string" ? { errorCode: value.code } : {}),
      cause: value.cause === undefined ? undefined : sanitize(value.cause instanceof Error ? value.cause.message : value.cause, depth + 1),
    };
  }
  if (Array.isArray(value)) return value.map((v) => sanitize(v, depth + 1));
  if (value instanceof URL) return scrubSecrets(value.href);
  // pino's paths reach one object down; what a client sends (client-log metadata) can nest deeper.
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = depth > 0 && SECRET_KEY_SET.has(k) ? censor(v, [k]) : sanitize(v, depth + 1);
  return out;
}

// ---- The logger --------------------------------------------------------------------------------

/**
 * Every line, whatever its level, goes to stdout  through console.log: one
 * synchronous write per line like pino's own destination, and test runners and the dev server
 * attribute console output to the test or request that wrote it.
 */
const stdoutLines = {
  write(line: string) {
    console.log(line.endsWith("\n") ? line.slice(0, -1) : line);
  },
};

function createLogger(settings: LogSettings): Logger {
  const options = {
    level: settings.level,
    base: null,
    timestamp: pino.stdTimeFunctions.isoTime,
    messageKey: "msg",
    formatters: {
      level: (label: string) => ({ level: label }),
      log: (object: Record<string, unknown>) => sanitize(object) as Record<string, unknown>,
    },
    mixin: () => {
      const reqId = currentRequestId();
      return reqId ? { reqId } : {};
    },
    redact: { paths: REDACT_PATHS, censor },
  };
  return pino(options, stdoutLines);
}

// Rebuilt when the settings change (tests switch VESTIBULE_LOG and LOG_LEVEL between suites); the
// check is one string comparison per line.
let held: { key: string; logger: Logger; settings: LogSettings } | null = null;
function current() {
  const key = `${process.env.LOG_LEVEL ?? ""}|${process.env.LOG_REQUESTS ?? ""}|${process.env.VESTIBULE_LOG ?? ""}`;
  if (held?.key !== key) {
    const settings = logSettings(process.env);
    held = { key, settings, logger: createLogger(settings) };
  }
  return held;
}

export function log(level: Level, event: string, fields: Record<string, unknown> = {}) {
  const { logger } = current();
  if (!logger.isLevelEnabled(level)) return;
  logger[level]({ event, ...fields }, event);
}

/** Whether LOG_REQUESTS asks for one access line per request. */
export function accessLogEnabled(): boolean {
  return current().settings.requests;
}

/**
 * The access line (LOG_REQUESTS=true): method, path — never the query string, where links carry
 * their tokens — status and duration in milliseconds.
 */
export function logRequest(entry: { method: string; url: string; status: number; durationMs: number }) {
  if (!accessLogEnabled()) return;
  const path = entry.url.split(/[?#]/, 1)[0] ?? "";
  log("info", "request", { method: entry.method, path, status: entry.status, durationMs: Math.round(entry.durationMs * 10) / 10 });
}

/**
 * For answers made without server/main.ts (the dev server, the tests' in-process handler):
 * the same request id, echoed in X-Request-Id and on every line, and the same access line. Under
 * server/main.ts the id is already set for the whole request, so this only calls `next`.
 */
export async function withRequestContext(
  request: Request,
  next: () => Promise<Response>,
  setHeader: (response: Response, name: string, value: string) => Response,
): Promise<Response> {
  if (currentRequestId()) return next();
  const reqId = requestIdFrom(request.headers.get(REQUEST_ID_HEADER));
  const started = performance.now();
  return runWithRequestId(reqId, async () => {
    const response = setHeader(await next(), REQUEST_ID_HEADER, reqId);
    logRequest({ method: request.method, url: new URL(request.url).pathname, status: response.status, durationMs: performance.now() - started });
    return response;
  });
}
