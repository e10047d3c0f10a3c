// AUTH_REQUIRE_MFA (docs/decisions/082 and 104): required MFA is a property of
// the session's factors, checked on every request React Router answers. A signed-in session that
// did not prove two factors (its recorded factors lack `mfa`) gets nothing but:
// - when its user has no second factor yet, the set-up: /account, which then shows (and its data
//   carries) only the set-up forms and takes only their intents (ADR 082);
// - when its user has one (a TOTP authenticator or a passkey), the re-authentication page, whose
//   first factor is followed by the second (or a passkey proves both), renewing the session with
//   them (ADR 104).
// What still answers: the auth endpoints under the base path (sign-out, the passkey options and
// registration — which refuse a one-factor session of a user who has a second factor —, sign-in,
// the two-factor and re-authentication pages; not POST /auth/session, which changes the profile) and
// the language menu. Health probes and static files are answered before React Router
// (server/main.ts) and never reach this gate. Signed-out visitors pass: the pages that need a
// session send them to sign in.
import { getSession } from "../core/session.server";
import { authRequest } from "../core/request.server";
import { readBody } from "../core/body.server";
import { jsonResponse, redirectResponse, wantsJsonRedirect } from "../core/respond.server";
import { isDatabaseUnavailable } from "../core/outage.server";
import { db } from "../../db/client.server";
import { getConfig, type AuthConfig } from "../core/config.server";
import { reauthUrl } from "../core/recent-auth.server";
import { pageOfRequest } from "../core/callback-url.server";
import type { CurrentSession } from "../core/session.server";

/**
 * A second factor asked of some users beyond AUTH_REQUIRE_MFA (an organization's requireMfa, ADR
 * 166), registered from outside accounts/: whether the session `sessionId` of `userId` is held to
 * it. The same machinery then applies to them as to everyone under AUTH_REQUIRE_MFA.
 */
export type MfaRequirement = (userId: string, sessionId: string | null) => Promise<boolean>;
let extraRequirement: MfaRequirement | null = null;
// Whether the requirement can hold at all (organizations on): when not, a request reads nothing more.
let requirementActive: () => boolean = () => false;

export function registerMfaRequirement(requirement: MfaRequirement | null, active: () => boolean = () => true): void {
  extraRequirement = requirement;
  requirementActive = requirement ? active : () => false;
}

/** Whether this session of this user must prove two factors: AUTH_REQUIRE_MFA, or the registered requirement. */
export async function mfaRequiredFor(config: Pick<AuthConfig, "requireMfa">, userId: string, sessionId: string | null): Promise<boolean> {
  if (config.requireMfa) return true;
  return extraRequirement ? extraRequirement(userId, sessionId) : false;
}

/** The JSON error code of the refusal: `403 {"error":"SecondFactorSetupRequired","url":…}`. */
export const SECOND_FACTOR_SETUP_REQUIRED = "SecondFactorSetupRequired";

/** The JSON error code of a one-factor session whose user has a second factor: `403 {"error":"SecondFactorRequired","url":…}`. */
export const SECOND_FACTOR_REQUIRED = "SecondFactorRequired";

/** The page where the second factor is set up (TOTP and passkeys live on /account). */
export const SECOND_FACTOR_SETUP_PAGE = "/account";

/** The /account intents that set a second factor up; every other one is refused while enrolment is pending. */
const SETUP_INTENTS: ReadonlySet<unknown> = new Set(["totp-start", "totp-confirm"]);

/** Paths (React Router's `.data` twins included) that answer whatever the user's factors. */
function answersAnyway(pathname: string, basePath: string): boolean {
  const page = pathname.endsWith(".data") ? pathname.slice(0, -".data".length) : pathname;
  return page === basePath || page.startsWith(`${basePath}/`) || page === "/language" || page === "/healthz" || page === "/readyz";
}

/** Whether the user has a passkey that can be used: one registered while passkeys are on (AUTH_PASSKEYS). */
export async function hasUsablePasskey(userId: string, config: Pick<AuthConfig, "passkeys"> = getConfig()): Promise<boolean> {
  return config.passkeys && (await db().passkey.findFirst({ where: { userId }, select: { id: true } })) !== null;
}

/** Whether the user has a second factor: a confirmed TOTP authenticator, or a usable passkey. */
export async function hasSecondFactor(userId: string): Promise<boolean> {
  const [totp, passkey] = await Promise.all([
    db().twoFactorCredential.findFirst({ where: { userId, confirmedAt: { not: null } }, select: { id: true } }),
    hasUsablePasskey(userId),
  ]);
  return totp !== null || passkey;
}

/** True when the session recorded that it proved two factors (`mfa`): the Session row, for both strategies. */
export async function sessionProvedTwoFactors(userId: string, sessionId: string | null): Promise<boolean> {
  if (!sessionId) return false;
  const row = await db().session.findFirst({ where: { id: sessionId, userId }, select: { factors: true } });
  return Boolean(row?.factors?.split(" ").includes("mfa"));
}

/** True when AUTH_REQUIRE_MFA is on and this user has no second factor yet: the page shows only the setup. */
export async function secondFactorSetupPending(requireMfa: boolean, userId: string): Promise<boolean> {
  return requireMfa && !(await hasSecondFactor(userId));
}

/** Where a request stands against AUTH_REQUIRE_MFA: met, the set-up still to do, or the second factor to prove. */
type Standing = "met" | "set-up" | "prove";

async function standingOf(session: CurrentSession): Promise<Standing> {
  if (await sessionProvedTwoFactors(session.userId, session.sessionId)) return "met";
  return (await hasSecondFactor(session.userId)) ? "prove" : "set-up";
}

/**
 * The answer that holds the request, or null when it may go on. Browsers get a 302 (to /account
 * for the set-up, to the re-authentication page to prove the second factor, back to the page
 * after); a JavaScript navigation React Router's redirect; JSON clients (`X-Auth-Return-Redirect:
 * 1`, `json=true`, `Accept: application/json`) `403 {"error":"SecondFactorSetupRequired"|
 * "SecondFactorRequired","url":…}`.
 */
export async function secondFactorSetupRefusal(request: Request): Promise<Response | null> {
  // Off (the default, and no requirement registered): nothing is read or built for the request.
  const everyone = getConfig().requireMfa;
  if (!everyone && !requirementActive()) return null;
  const ar = authRequest(request);
  const { pathname } = ar.url;
  const post = request.method.toUpperCase() === "POST";
  // POST /auth/session changes the profile (the client's update()): the same change /account refuses
  // while the factors are short, so it is no way round it. GET /auth/session still answers.
  const sessionUpdate = post && (pathname === `${ar.config.basePath}/session` || pathname === `${ar.config.basePath}/session.data`);
  if (!sessionUpdate && answersAnyway(pathname, ar.config.basePath)) return null;
  let standing: Standing;
  try {
    const { session } = await getSession(ar, { roll: false });
    if (!session) return null;
    if (!everyone && !(await mfaRequiredFor({ requireMfa: false }, session.userId, session.sessionId))) return null;
    standing = await standingOf(session);
  } catch (error) {
    // The page itself meets the outage and answers it (ADR 052).
    if (isDatabaseUnavailable(error)) return null;
    throw error;
  }
  if (standing === "met") return null;
  // Only now, for a session held to two factors: the body is read once per request and shared
  // with the action (body.server.ts), with the default limits — a request without such a session
  // (a SCIM client's bearer token, an identity provider's assertion) keeps its own reading. An
  // unreadable one is left to the action's own refusal.
  let body: Record<string, unknown> | undefined;
  if (post) body = await readBody(request).catch(() => undefined);
  const json = sessionUpdate || wantsJsonRedirect(request, body) || /\bapplication\/json\b/.test(request.headers.get("Accept") ?? "");
  if (standing === "prove") {
    const url = reauthUrl(ar, pageOfRequest(ar.url));
    if (json) return jsonResponse({ error: SECOND_FACTOR_REQUIRED, url }, { status: 403, noCache: true });
    return redirectResponse(url);
  }
  const onSetupPage = pathname === SECOND_FACTOR_SETUP_PAGE || pathname === `${SECOND_FACTOR_SETUP_PAGE}.data`;
  if (onSetupPage && (!post || body === undefined || SETUP_INTENTS.has(body.intent))) return null;
  const url = `${ar.origin}${SECOND_FACTOR_SETUP_PAGE}`;
  if (json) return jsonResponse({ error: SECOND_FACTOR_SETUP_REQUIRED, url }, { status: 403, noCache: true });
  return redirectResponse(url);
}
