// POST /auth/session  and the /account profile form: a signed-in user updates their
// name or picture, and the session is issued again with it.
import { z } from "zod";
import { BadRequestError, readBody, refusedBodyResponse } from "../core/body.server";
import { verifyCsrf } from "../core/csrf.server";
import { authRequest } from "../core/request.server";
import { jsonResponse } from "../core/respond.server";
import { endSession, getSession, refreshSession } from "../core/session.server";
import { eventSource, recordEvent } from "./audit.server";
import type { NameRefusal } from "../core/display-text";
import { nameRefusalOf, ProfileUpdate, updateProfile } from "./users.server";

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
): Promise<{ error: string; field?: string; issue?: string; refusal?: NameRefusal | null } | { session: unknown; setCookies: string[] }> {
  const ar = authRequest(request);
  const parsed = ProfileUpdate.safeParse(data ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      error: issue.code === "unrecognized_keys" ? "Only name and image can be updated." : issue.message,
      field: String(issue.path[0] ?? ""),
      issue: issue.code,
      refusal: nameRefusalOf(issue as { params?: Record<string, unknown> }),
    };
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
  await recordEvent("session-update", { userId: user.id, ...eventSource(ar), detail: { fields: Object.keys(parsed.data) } });
  const refreshed = await refreshSession(ar, user);
  return { session: refreshed.session?.data ?? null, setCookies: refreshed.setCookies };
}
