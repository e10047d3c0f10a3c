// The JSON endpoints of contract §3: providers, csrf, session (GET and POST update) and _log.
import { z } from "zod";
import { BadRequestError, CLIENT_LOG_BODY_LIMIT, readBody, refusedBodyResponse } from "./core/body.server";
import { ensureCsrfToken, verifyCsrf } from "./core/csrf.server";
import { log } from "./core/log.server";
import { getProviders } from "./providers.server";
import { hitRateLimit, RATE_LIMITS } from "./core/rate-limit.server";
import { authBaseUrl, authRequest, clientAddress } from "./core/request.server";
import { badRequest, jsonResponse } from "./core/respond.server";
import { endSession, getSession, refreshSession } from "./core/session.server";
import { recordEvent } from "./audit.server";
import { ProfileUpdate, updateProfile } from "./users.server";

export function providersResponse(request: Request): Response {
  const ar = authRequest(request);
  const base = authBaseUrl(ar);
  const body = Object.fromEntries(
    getProviders(ar.config).map((p) => [
      p.id,
      { id: p.id, name: p.name, type: p.type, signinUrl: `${base}/signin/${p.id}`, callbackUrl: `${base}/callback/${p.id}` },
    ]),
  );
  return jsonResponse(body);
}

export function csrfResponse(request: Request): Response {
  const ar = authRequest(request);
  const { token, setCookie } = ensureCsrfToken(ar);
  return jsonResponse({ csrfToken: token }, { noCache: true, setCookies: [setCookie] });
}

/** GET /auth/session — the hottest path: one cookie read, one decode (or one indexed lookup). */
export async function sessionResponse(request: Request): Promise<Response> {
  const ar = authRequest(request);
  try {
    const { session, setCookies } = await getSession(ar);
    return jsonResponse(session ? session.data : null, { noCache: true, setCookies });
  } catch (error) {
    log("error", "session-read-failed", { error });
    return jsonResponse(null, { noCache: true });
  }
}

const SessionUpdateBody = z.object({ csrfToken: z.unknown(), data: z.unknown().optional() });

/** POST /auth/session — `{csrfToken, data: {name?, image?}}`; bad CSRF → 400 null. */
export async function sessionUpdateResponse(request: Request): Promise<Response> {
  const ar = authRequest(request);
  let body;
  try {
    body = SessionUpdateBody.parse(await readBody(request));
  } catch (error) {
    if (error instanceof BadRequestError && error.status !== 400) return refusedBodyResponse(error);
    return jsonResponse(null, { status: 400 });
  }
  if (!verifyCsrf(ar, body.csrfToken)) return jsonResponse(null, { status: 400 });
  const result = await updateSessionData(request, body.data);
  if ("error" in result) return jsonResponse({ error: result.error }, { status: 400 });
  return jsonResponse(result.session, { setCookies: result.setCookies });
}

/**
 * Validates and stores a profile update for the request's session and re-issues the session.
 * Shared by POST /auth/session and the /account page.
 */
export async function updateSessionData(
  request: Request,
  data: unknown,
): Promise<{ error: string; field?: string } | { session: unknown; setCookies: string[] }> {
  const ar = authRequest(request);
  const parsed = ProfileUpdate.safeParse(data ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { error: issue.code === "unrecognized_keys" ? "Only name and image can be updated." : issue.message, field: String(issue.path[0] ?? "") };
  }
  const { session, setCookies: readCookies } = await getSession(ar, { roll: false });
  if (!session) return { session: null, setCookies: readCookies };
  if (Object.keys(parsed.data).length === 0) {
    const rolled = await getSession(ar);
    return { session: rolled.session?.data ?? null, setCookies: rolled.setCookies };
  }
  const user = await updateProfile(session.userId, parsed.data);
  if (!user) {
    const ended = await endSession(ar);
    return { session: null, setCookies: ended.setCookies };
  }
  await recordEvent("session-update", { userId: user.id, ip: clientAddress(ar), detail: { fields: Object.keys(parsed.data) } });
  const refreshed = await refreshSession(ar, user);
  return { session: refreshed.session?.data ?? null, setCookies: refreshed.setCookies };
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
  const subject = clientAddress(ar) ?? "unknown";
  if (!(await hitRateLimit(RATE_LIMITS.clientLog, subject))) return new Response(null, { status: 429, headers: { "Retry-After": "60" } });
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
    client: subject,
    userAgent: request.headers.get("User-Agent"),
  });
  return new Response(null, { status: 200 });
}
