// Which /account intents need a recent sign-in (ADR 058) and the refusal
// they get past the window: the form answers 403 with the sentence and a link to sign in again;
// a JSON client (X-Auth-Return-Redirect: 1, json=true) gets 403 {"error":"ReauthRequired","url"}.
// Nothing is written before this check passes.
import { data } from "react-router";
import { isRecentAuth, readBody, reauthRefusal, reauthRequiredResponse, requireSession, verifyCsrf, type AuthRequest } from "~/auth/core";
import type { CurrentSession } from "~/auth/core/session.server";
import { wantsJsonRedirect } from "~/auth/core/respond.server";

/**
 * Changes to how the account is protected; "revoke-session" only for another session than this one.
 * Removing a passkey or unlinking a provider too (ADR 079): each ends the sessions that way in
 * started, so from an old copy of a cookie they would sign the owner's devices out and strip their
 * ways in one by one, which ending another session itself is refused for.
 */
const RECENT_AUTH_INTENTS: ReadonlySet<unknown> = new Set([
  "change-email",
  "password-set",
  "password-change",
  "password-remove",
  "totp-start",
  "totp-confirm",
  "totp-disable",
  "recovery-codes",
  "passkey-remove",
  "unlink-account",
  "revoke-others",
  "revoke-all",
  // Deleting the account, and a copy of everything it holds.
  "account-delete",
  "account-export",
]);

export function needsRecentAuth(body: Record<string, unknown>, session: CurrentSession): boolean {
  if (body.intent === "revoke-session") return body.sessionId !== session.sessionId;
  return RECENT_AUTH_INTENTS.has(body.intent);
}

/** The refusal of `body`'s intent, or null when it may go on. */
export async function recentAuthRefusal(ar: AuthRequest, session: CurrentSession, body: Record<string, unknown>) {
  if (!needsRecentAuth(body, session) || (await isRecentAuth(ar, session))) return null;
  if (wantsJsonRedirect(ar.request, body)) return reauthRequiredResponse(ar, "/account");
  return data({ ...reauthRefusal(ar, "/account"), fieldErrors: {} }, { status: 403 });
}

/**
 * Answers a JSON client's refused POST /account before the page renders (an action's answer is
 * rendered into the page; this one must be the JSON itself). Everything else goes on to the action.
 */
export async function reauthJsonMiddleware({ request }: { request: Request }, next: () => Promise<Response>): Promise<Response> {
  const body = await postBody(request);
  if (!body || !wantsJsonRedirect(request, body)) return next();
  const signedIn = await signedInWithCsrf(request, body);
  if (!signedIn) return next();
  const refusal = await recentAuthRefusal(signedIn.ar, signedIn.session, body);
  return refusal instanceof Response ? refusal : next();
}

/**
 * The body of a POST to /account for the route's middlewares, or null (not a POST, or a body the
 * reader refused): the action then answers it as it answers every other.
 */
export async function postBody(request: Request): Promise<Record<string, unknown> | null> {
  if (request.method.toUpperCase() !== "POST") return null;
  try {
    return await readBody(request);
  } catch {
    return null;
  }
}

/** The signed-in session of a POST whose CSRF token is right, or null (the action refuses it). */
export async function signedInWithCsrf(request: Request, body: Record<string, unknown>): Promise<{ ar: AuthRequest; session: CurrentSession } | null> {
  let required;
  try {
    required = await requireSession(request, { roll: false });
  } catch {
    return null;
  }
  return verifyCsrf(required.ar, body.csrfToken) ? required : null;
}
