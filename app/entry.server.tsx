import { PassThrough } from "node:stream";
import { createReadableStreamFromReadable } from "@react-router/node";
import { isbot } from "isbot";
import { renderToPipeableStream } from "react-dom/server";
import { isRouteErrorResponse, ServerRouter, type EntryContext, type HandleErrorFunction } from "react-router";
import { getConfig, NIST_SINGLE_FACTOR_MIN_LENGTH } from "./auth/core/config.server";
import { log } from "./auth/core/log.server";
import { originHeaderNotAUrl } from "./auth/core/origin.server";
import { isDatabaseUnavailable, notePageFailedOnDatabase } from "./auth/core/outage.server";
import { contentSecurityPolicy, createScriptNonce, REPORTING_ENDPOINTS } from "./auth/core/security-headers.server";
import { authorizationOrigins } from "./auth/signin/registry.server";
import { migrate } from "./db/migrate.server";
import { methodNotAllowed } from "./method-not-allowed";
import { mailLook } from "./theme.server";

export const streamTimeout = 5_000;

// For server/main.ts, which sees the app only through this module: GET /readyz, the database
// pool to close at shutdown, and the log line format (docs/decisions/031).
export { checkReadiness } from "./db/readiness.server";
export { closeDb } from "./db/client.server";
// …and the hourly cleanup, one instance at a time (docs/decisions/051).
import { scheduleCleanup as scheduleCoreCleanup } from "./auth/core/cleanup.server";
import { recheckDomainsLogged } from "./auth/organizations";
/** The hourly maintenance: expired rows, then organizations' domains due for their daily DNS check (ADR 149). */
export const scheduleCleanup = () => scheduleCoreCleanup({ also: [recheckDomainsLogged] });
// …and the security e-mails' sender, which sends what the queue holds, a restart's leftovers first (ADR 059).
export { startMailSender } from "./mail/queue.server";
export { startBackchannelSender } from "./auth/provider/backchannel.server";
// The OAuth provider's engine, answered by the server before React Router (docs/features/provider.md).
export { assertEngineSafe, handleEngineRequest, isEnginePath } from "./auth/provider/engine.server";
// Its own pages link the app's stylesheet: the built asset's URL, known here where Vite resolves it.
import engineStylesheet from "./app.css?url";
import { setPagesStylesheet } from "./auth/provider/pages.server";
setPagesStylesheet(engineStylesheet);
export { log };
// …the request id every line of a request carries, and the access line (docs/decisions/050).
export { accessLogEnabled, logRequest, REQUEST_ID_HEADER, requestIdFrom, runWithRequestId } from "./auth/core/log.server";
// …and the headers it puts on its own answers (probes, refusals, static assets): docs/decisions/037.
export { baseSecurityHeaders } from "./auth/core/security-headers.server";
// For the fast path's own writer (server/fast-path.ts, docs/decisions/089).
export { answerTextOf } from "./auth/core/respond.server";
export { answerWrittenDirectly } from "./auth/core/request-context.server";
// …and the settings file it reads before any other setting: VESTIBULE_ENV_FILE's, else the project's .env (ADR 113).
export { loadCommandEnvFile } from "./auth/core/env-file.server";

/**
 * Run by server/main.ts before it listens: a bad configuration stops the start with the
 * variable's name. The migrations are migrateDatabase's, which the server may run after it
 * listens, when the database is not there yet (docs/decisions/106).
 */
export function prepareServer() {
  const config = getConfig();
  // The e-mails' colours, fonts and logo (app/theme.css, ADR 126): a theme without a property they
  // use stops the start naming it, rather than the first message.
  mailLook();
  // Allowed (8 to 64), but below NIST SP 800-63B-4's floor for a password that is the only
  // factor: said once, at the start, where the operator looks (docs/decisions/075).
  if (config.passwordMinLength < NIST_SINGLE_FACTOR_MIN_LENGTH) {
    log("warn", "password-min-length-below-nist", {
      passwordMinLength: config.passwordMinLength,
      message: `AUTH_PASSWORD_MIN_LENGTH=${config.passwordMinLength} is below the ${NIST_SINGLE_FACTOR_MIN_LENGTH} characters NIST SP 800-63B-4 requires of a password used without a second factor`,
    });
  }
  return config;
}

/**
 * The committed migrations, applied (idempotent; PostgreSQL takes an advisory lock so several
 * instances can start at once). Rejects with an error isDatabaseUnavailable() knows when the
 * database cannot be reached; anything else (a failed migration) is for the operator.
 */
export async function migrateDatabase(print: (line: string) => void) {
  // Connecting is bounded by DATABASE_TIMEOUT_MS, as every other connection of the server's is.
  await migrate({ log: print, connectTimeoutMs: getConfig().databaseTimeoutMs });
}
export { isDatabaseUnavailable };
// …and what it answers meanwhile, the database not answering yet.
export { startupOutageAnswer } from "./auth/core/outage.server";

export const handleError: HandleErrorFunction = (error, { request }) => {
  // Aborted requests are the client's doing, not ours.
  if (request.signal.aborted) return;
  // A method the page does not take (React Router's 405) is the client's doing too; what it
  // carries is React Router's internal message, not ours to log as a failure.
  if (isRouteErrorResponse(error) && error.status < 500) return;
  // A mutation whose Origin header is no URL: React Router refuses it itself (400 "Bad Request")
  // before any middleware of ours. The client's malformed request, said once below error level
  // with its reason, so that nobody can fill the log with error lines (docs/decisions/037).
  if (originHeaderNotAUrl(request)) {
    log("info", "request-refused", { reason: "origin-not-a-url", path: new URL(request.url).pathname, method: request.method });
    return;
  }
  // The database is down or too slow: logged once as such; the root middleware turns the page's
  // 500 into the Configuration error page (docs/decisions/052).
  if (isDatabaseUnavailable(error)) return notePageFailedOnDatabase(error, new URL(request.url).pathname);
  log("error", "request-failed", { error, path: new URL(request.url).pathname, method: request.method });
};

function plainDataAnswer(response: Response, body: string, extra: Record<string, string> = {}): Response {
  const headers = new Headers(response.headers);
  headers.set("Content-Type", "text/plain; charset=utf-8");
  headers.delete("Content-Length");
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return new Response(body, { status: response.status, headers });
}

/**
 * React Router's data requests (`<path>.data`, what its client fetches for navigations and
 * forms). Two of its own refusals carry its internal wording in the payload: a method the route
 * does not take (405: "You made a POST request to … but did not provide an `action` …", "Invalid
 * request method …"), and a mutation whose Origin header is no URL at all (400, a sanitised
 * "Unexpected Server Error", thrown before any middleware of ours runs). Our own client sends
 * neither, so each becomes a plain answer that says nothing more (docs/decisions/033). Our
 * actions' own 400s (a refused /account form) pass unchanged: the client renders them.
 */
export async function handleDataRequest(response: Response): Promise<Response> {
  if (response.status === 405) return plainDataAnswer(response, "Method Not Allowed", { Allow: "GET, HEAD, POST" });
  if (response.status === 400 && (await response.clone().text()).includes('"SanitizedError"')) {
    return plainDataAnswer(response, "Bad Request");
  }
  return response;
}

export default function handleRequest(
  request: Request,
  status: number,
  headers: Headers,
  routerContext: EntryContext,
) {
  // One nonce per page: React Router puts it on every script it renders (<Scripts>,
  // <ScrollRestoration>, the streamed data) and React on its own inline scripts; nothing else
  // may run (docs/decisions/037). The base headers come from the root middleware.
  const nonce = createScriptNonce();
  headers.set("Content-Security-Policy", contentSecurityPolicy(nonce, authorizationOrigins(getConfig())));
  headers.set("Reporting-Endpoints", REPORTING_ENDPOINTS);
  if (request.method.toUpperCase() === "HEAD") return new Response(null, { status, headers });
  if (status === 405) return methodNotAllowed(request, headers, routerContext);
  const userAgent = request.headers.get("User-Agent");
  const waitForAll = (userAgent && isbot(userAgent)) || routerContext.isSpaMode;

  return new Promise<Response>((resolve, reject) => {
    let shellRendered = false;
    let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => abort(), streamTimeout + 1000);
    const { pipe, abort } = renderToPipeableStream(<ServerRouter context={routerContext} url={request.url} nonce={nonce} />, {
      nonce,
      [waitForAll ? "onAllReady" : "onShellReady"]() {
        shellRendered = true;
        const body = new PassThrough({
          final(callback) {
            clearTimeout(timer);
            timer = undefined;
            callback();
          },
        });
        headers.set("Content-Type", "text/html; charset=utf-8");
        pipe(body);
        resolve(new Response(createReadableStreamFromReadable(body), { status, headers }));
      },
      onShellError: reject,
      onError(error: unknown) {
        status = 500;
        if (shellRendered) log("error", "render-failed", { error });
      },
    });
  });
}
