// The JSON endpoints that know no sign-in method and no account: csrf, session (GET)
// and _log. GET /auth/providers is signin/endpoint.server.ts; POST /auth/session is
// accounts/profile.server.ts.
import { z } from "zod";
import { BadRequestError, CLIENT_LOG_BODY_LIMIT, readBody, refusedBodyResponse } from "./body.server";
import { ensureCsrfToken, verifyCsrf } from "./csrf.server";
import { log } from "./log.server";
import { isDatabaseUnavailable, noteDatabaseUnavailable, outageJson } from "./outage.server";
import { clientSubject, countHit } from "./limits.server";
import { authRequest, clientAddress } from "./request.server";
import { badRequest, jsonResponse } from "./respond.server";
import { getSession, type CurrentSession } from "./session.server";

export function csrfResponse(request: Request): Response {
  const ar = authRequest(request);
  const { token, setCookie } = ensureCsrfToken(ar);
  return jsonResponse({ csrfToken: token }, { noCache: true, setCookies: [setCookie] });
}

/** GET /auth/session — the hottest path: one cookie read, one decode (or one indexed lookup). */
/**
 * GET /auth/session. `extend` adds fields beside `user` and `expires` for a signed-in session (the
 * active organization, ADR 148): the route composes it, the core knows nothing of what it adds.
 */
export async function sessionResponse(request: Request, { extend }: { extend?: (session: CurrentSession) => Promise<Record<string, unknown>> } = {}): Promise<Response> {
  const ar = authRequest(request);
  try {
    const { session, setCookies } = await getSession(ar);
    const extra = session && extend ? await extend(session) : {};
    return jsonResponse(session ? { ...session.data, ...extra } : null, { noCache: true, setCookies });
  } catch (error) {
    // Only a database session needs the database here; a jwt one is read from its cookie.
    if (isDatabaseUnavailable(error)) {
      noteDatabaseUnavailable(error, "GET /auth/session");
      return outageJson();
    }
    log("error", "session-read-failed", { error });
    return jsonResponse(null, { noCache: true });
  }
}

const ClientLog = z.object({
  csrfToken: z.unknown(),
  level: z.enum(["error", "warn", "debug"]),
  code: z.string().min(1).max(100),
  message: z.string().max(1000).optional(),
  metadata: z.unknown().optional(),
});

/** POST /auth/_log — a client-side auth event, written as one structured line. */
export async function clientLogResponse(request: Request): Promise<Response> {
  const ar = authRequest(request);
  let raw;
  try {
    raw = await readBody(request, CLIENT_LOG_BODY_LIMIT);
  } catch (error) {
    if (error instanceof BadRequestError) return refusedBodyResponse(error);
    throw error;
  }
  if (!verifyCsrf(ar, raw.csrfToken)) return new Response(null, { status: 403 });
  const parsed = ClientLog.safeParse(raw);
  if (!parsed.success) return badRequest();
  const client = clientAddress(ar);
  const refused = await countHit(ar.config.rateLimits, "CLIENT_LOG", clientSubject(client));
  if (refused) return new Response(null, { status: 429, headers: { "Retry-After": String(refused.retryAfterSeconds) } });
  let metadata = parsed.data.metadata;
  // Form posts carry metadata as a JSON string.
  if (typeof metadata === "string") {
    try {
      metadata = JSON.parse(metadata);
    } catch {
      // Kept as the string it is.
    }
  }
  log(parsed.data.level, "client-log", {
    code: parsed.data.code,
    message: parsed.data.message,
    metadata,
    client: client ?? "unknown",
    userAgent: request.headers.get("User-Agent"),
  });
  return new Response(null, { status: 200 });
}
