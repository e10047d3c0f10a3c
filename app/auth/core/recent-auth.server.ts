// The recent sign-in rule (ADR 058): whoever changes how the account is
// protected — its address, password, second factor, passkeys, linked accounts, other sessions —
// must have proved who they are moments ago, not merely hold a session cookie. A copy of a cookie
// (a shared computer, a backup, malware, a leaked log) then cannot take the account over.
// One window (AUTH_REAUTH_MAX_AGE), measured from the session row's authenticatedAt: the sign-in
// (or a re-authentication), never a roll. This module knows no sign-in method.
import { toRelative, validateCallbackUrl } from "./callback-url.server";
import { t } from "../../i18n/t.server";
import type { AuthRequest } from "./request.server";
import { jsonResponse } from "./respond.server";
import { jsonRefusal } from "./page-session.server";
import { sessionAuthenticatedAt, type CurrentSession } from "./session.server";

/** The JSON error code of a refusal (`403 {"error":"ReauthRequired","url":…}`). */
export const REAUTH_REQUIRED = "ReauthRequired";

/** The re-authentication page's path under the base path (signin/reauth-page.server.ts). */
export const REAUTH_PAGE = "/reauth";

/**
 * Where the signed-in user proves who they are again (/auth/reauth, ADR 080) and comes back to `page`
 * (a same-origin path or URL; anything else comes back to /account). The one place that builds it.
 */
export function reauthUrl(ar: AuthRequest, page: string): string {
  const back = validateCallbackUrl(page, ar.origin) ?? `${ar.origin}/account`;
  return `${ar.origin}${ar.config.basePath}${REAUTH_PAGE}?${new URLSearchParams({ callbackUrl: toRelative(back) })}`;
}

/** Whether the session proved who it is within `maxAge` seconds (default AUTH_REAUTH_MAX_AGE). */
export async function isRecentAuth(ar: AuthRequest, session: CurrentSession, { maxAge = ar.config.reauthMaxAge, now = new Date() } = {}) {
  const at = await sessionAuthenticatedAt(session, now);
  return at !== null && now.getTime() - at.getTime() < maxAge * 1000;
}

/** The JSON answer a refused change gets: `403 {"error":"ReauthRequired","url":…}`. */
export function reauthRequiredResponse(ar: AuthRequest, page: string): Response {
  return jsonRefusal(ar.request, jsonResponse({ error: REAUTH_REQUIRED, url: reauthUrl(ar, page) }, { status: 403, noCache: true }));
}

/** What a page shows beside a refused form: the sentence and the link. */
export function reauthRefusal(ar: AuthRequest, page: string) {
  return { formError: t("reauth.required"), reauthUrl: reauthUrl(ar, page) };
}
// The app's requireRecentAuth(request, { maxAge }) is ~/auth's (app/auth/index.ts), built on the above.
