// Finishing a re-authentication (contract section 16, ADR 080): the signed-in user proved one of
// their own factors again on B/reauth. With the second factor on (and a factor it covers), the
// two-factor page comes next, marked with the session it re-authenticates; then — or at once —
// that session is renewed (a new id and cookie, recent from now; signed-in user, sign-in start,
// method and factors unchanged), the audit trail says `reauthenticated`, and the browser goes back
// to the page it came from. Nothing here starts a session for anyone: a browser whose session is
// not the one that started the re-authentication any more gets the sign-in page.
import { eventSource, recordEvent } from "../accounts/audit.server";
import { toRelative } from "../core/callback-url.server";
import type { AuthRequest } from "../core/request.server";
import { redirectResponse } from "../core/respond.server";
import { getSession, renewAuthentication, type CurrentSession } from "../core/session.server";
import { issuePendingSignIn } from "../two-factor/pending.server";
import { firstFactorOf, needsSecondFactor } from "../two-factor/policy.server";
import { secondFactorEnabled } from "../two-factor/store.server";
import type { ProviderType } from "./provider";

export type ReauthFinish = { ar: AuthRequest; json: boolean; callbackUrl: string; setCookies: string[] };

/**
 * What names the session being re-authenticated, in the pending second factor and the OAuth
 * check cookies: its row id (a jwt cookie minted without one is named by its user alone).
 */
export function reauthSubject(session: CurrentSession): string {
  return session.sessionId ?? `user:${session.userId}`;
}

/** The request's session when it is still the one `subject` names (read without rolling), else null. */
export async function reauthenticatingSession(ar: AuthRequest, userId: string, subject: string): Promise<CurrentSession | null> {
  const { session } = await getSession(ar, { roll: false });
  if (!session || session.userId !== userId || reauthSubject(session) !== subject) return null;
  return session;
}

/** The browser's session is gone or another one: the sign-in page, back to the same page after. */
export function reauthSessionGone(ctx: ReauthFinish): Response {
  const params = new URLSearchParams({ error: "SessionRequired", callbackUrl: toRelative(ctx.callbackUrl) });
  return redirectResponse(`${ctx.ar.origin}${ctx.ar.config.basePath}/signin?${params}`, { json: ctx.json, setCookies: ctx.setCookies });
}

/** The session proved who it is with `factors`: renewed, recorded, and back to the page. */
export async function renewReauthenticated(ctx: ReauthFinish, session: CurrentSession, method: string, factors: readonly string[]): Promise<Response> {
  const renewed = await renewAuthentication(ctx.ar, session);
  if (!renewed) return reauthSessionGone(ctx);
  await recordEvent("reauthenticated", { userId: session.userId, ...eventSource(ctx.ar), detail: { provider: method, factors } });
  return redirectResponse(ctx.callbackUrl, { json: ctx.json, setCookies: [...ctx.setCookies, ...renewed] });
}

/**
 * The first factor of a re-authentication was proved with provider `method` of kind
 * `providerType`: the second factor next when the user has it on and the kind needs it (ADR 043),
 * else the session is renewed at once.
 */
export async function completeReauthentication(ctx: ReauthFinish, session: CurrentSession, method: string, providerType: ProviderType): Promise<Response> {
  const firstFactor = firstFactorOf(providerType);
  if (needsSecondFactor(providerType) && (await secondFactorEnabled(session.userId))) {
    const pending = await issuePendingSignIn(ctx.ar, {
      userId: session.userId,
      method,
      firstFactor,
      callbackUrl: ctx.callbackUrl,
      isNewUser: false,
      reauthOf: reauthSubject(session),
    });
    return redirectResponse(`${ctx.ar.origin}${ctx.ar.config.basePath}/two-factor`, { json: ctx.json, setCookies: [...ctx.setCookies, pending] });
  }
  return renewReauthenticated(ctx, session, method, needsSecondFactor(providerType) ? [firstFactor] : [firstFactor, "mfa"]);
}
