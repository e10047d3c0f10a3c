// AUTH_REQUIRE_MFA (contract section 16, docs/decisions/082): a signed-in user without a second
// factor — a confirmed TOTP authenticator or a passkey — is sent to set one up before any other
// page answers. What still answers: the auth endpoints under the base path (sign-out, the passkey
// options and registration, sign-in, the two-factor and re-authentication pages; not POST B/session,
// which changes the profile), the language menu, and /account, which then shows only the setup
// forms and takes only their intents.
// Health probes and static files are answered before React Router (server/main.ts) and never
// reach this gate. Signed-out visitors pass: the pages that need a session send them to sign in.
import { getSession } from "../core/session.server";
import { authRequest } from "../core/request.server";
import { readBody } from "../core/body.server";
import { jsonResponse, redirectResponse, wantsJsonRedirect } from "../core/respond.server";
import { isDatabaseUnavailable } from "../core/outage.server";
import { db } from "../../db/client.server";
import { getConfig } from "../core/config.server";

/** The JSON error code of the refusal: `403 {"error":"SecondFactorSetupRequired","url":…}`. */
export const SECOND_FACTOR_SETUP_REQUIRED = "SecondFactorSetupRequired";

/** The page where the second factor is set up (TOTP and passkeys live on /account). */
export const SECOND_FACTOR_SETUP_PAGE = "/account";

/** The /account intents that set a second factor up; every other one is refused while enrolment is pending. */
const SETUP_INTENTS: ReadonlySet<unknown> = new Set(["totp-start", "totp-confirm"]);

/** Paths (React Router's `.data` twins included) that answer whatever the user's factors. */
function answersAnyway(pathname: string, basePath: string): boolean {
  const page = pathname.endsWith(".data") ? pathname.slice(0, -".data".length) : pathname;
  return page === basePath || page.startsWith(`${basePath}/`) || page === "/language" || page === "/healthz" || page === "/readyz";
}

/** Whether the user has a second factor: a confirmed TOTP authenticator, or a passkey. */
export async function hasSecondFactor(userId: string): Promise<boolean> {
  const [totp, passkey] = await Promise.all([
    db().twoFactorCredential.findFirst({ where: { userId, confirmedAt: { not: null } }, select: { id: true } }),
    db().passkey.findFirst({ where: { userId }, select: { id: true } }),
  ]);
  return totp !== null || passkey !== null;
}

/** True when AUTH_REQUIRE_MFA is on and this user has no second factor yet: the page shows only the setup. */
export async function secondFactorSetupPending(requireMfa: boolean, userId: string): Promise<boolean> {
  return requireMfa && !(await hasSecondFactor(userId));
}

/**
 * The answer that sends the request to the setup page, or null when it may go on. Browsers get a
 * 302 to /account; JSON clients (`X-Auth-Return-Redirect: 1`, `json=true`, `Accept:
 * application/json`) `403 {"error":"SecondFactorSetupRequired","url":…}`.
 */
export async function secondFactorSetupRefusal(request: Request): Promise<Response | null> {
  // Off (the default): nothing is read or built for the request.
  if (!getConfig().requireMfa) return null;
  const ar = authRequest(request);
  const { pathname } = ar.url;
  const post = request.method.toUpperCase() === "POST";
  // POST B/session changes the profile (the client's update()): the same change /account refuses
  // while the set-up is pending, so it is no way round it. GET B/session still answers.
  const sessionUpdate = post && (pathname === `${ar.config.basePath}/session` || pathname === `${ar.config.basePath}/session.data`);
  if (!sessionUpdate && answersAnyway(pathname, ar.config.basePath)) return null;
  const onSetupPage = pathname === SECOND_FACTOR_SETUP_PAGE || pathname === `${SECOND_FACTOR_SETUP_PAGE}.data`;
  if (onSetupPage && !post) return null;
  let body: Record<string, unknown> | undefined;
  if (post) {
    // The body is read once per request and shared with the action (body.server.ts); an
    // unreadable one is left to the action's own refusal.
    body = await readBody(request).catch(() => undefined);
    if (onSetupPage && (body === undefined || SETUP_INTENTS.has(body.intent))) return null;
  }
  try {
    const { session } = await getSession(ar, { roll: false });
    if (!session || (await hasSecondFactor(session.userId))) return null;
  } catch (error) {
    // The page itself meets the outage and answers it (ADR 052).
    if (isDatabaseUnavailable(error)) return null;
    throw error;
  }
  const url = `${ar.origin}${SECOND_FACTOR_SETUP_PAGE}`;
  const json = sessionUpdate || wantsJsonRedirect(request, body) || /\bapplication\/json\b/.test(request.headers.get("Accept") ?? "");
  if (json) return jsonResponse({ error: SECOND_FACTOR_SETUP_REQUIRED, url }, { status: 403, noCache: true });
  return redirectResponse(url);
}
