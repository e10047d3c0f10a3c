// The sign-in flow every method shares: parse the request, run the method's strategy, and turn its
// outcome — a user, a protocol redirect, or a failure — into one response (creating the session
// on success). Methods call runStrategy; this module never looks a provider up (the endpoint,
// endpoint.server.ts, does), so it imports no method and not the registry.
import { eventSource, recordEvent } from "../accounts/audit.server";
import { BadRequestError, readBody, refusedBodyResponse, type Body } from "../core/body.server";
import { toRelative } from "../core/callback-url.server";
import { AuthError, EmailStepUpRequired } from "../core/errors";
import { deviceIdFor, issueDeviceCookie } from "../core/device-cookie.server";
import { notifyNewDeviceSignIn } from "../accounts/security-notices.server";
import { devicesResetAt } from "../accounts/wasnt-me.server";
import { currentLocale } from "../../i18n/t.server";
import { rememberLocale } from "../../i18n/user-locale.server";
import { clearConsecutiveFailures, retryAfterMinutes } from "../core/limits.server";
import { LIMIT_KIND } from "../core/limit-table";
import { log } from "../core/log.server";
import { isDatabaseUnavailable, noteDatabaseUnavailable, outageRedirect } from "../core/outage.server";
import type { FlowContext, ProviderType } from "./provider";
import { authRequest, type AuthRequest } from "../core/request.server";
import { errorRedirect, redirectResponse, wantsJsonRedirect } from "../core/respond.server";
import { createSession, getSession, renewAuthentication, type CurrentSession } from "../core/session.server";
import { isDisabled, type SignInResult } from "../accounts/users.server";
import type { AuthErrorCode } from "../core/errors";
import { applyPasswordReset } from "../accounts/passwords.server";
import { clearPendingSignIn, issuePendingSignIn } from "../two-factor/pending.server";
import { factorsOf, firstFactorOf, needsSecondFactor } from "../two-factor/policy.server";
import { secondStepOf } from "../two-factor/store.server";

// For methods that add a sign-in the second factor does not cover (passkeys): whether the current
// session may (ADR 045). Methods reach two-factor/ only through the flow.
export { sessionMayAddExemptMethod } from "../two-factor/store.server";

/** Maps any failure to its response; causes go to the log, never to the visitor. */
export function failureResponse(ar: AuthRequest, error: unknown, json: boolean, setCookies: string[] = []): Response {
  if (error instanceof Response) return error;
  if (error instanceof BadRequestError) {
    log("info", "bad-request", { reason: error.message, path: ar.url.pathname });
    return refusedBodyResponse(error);
  }
  // Before AuthError: a method may wrap the database's failure in one of its own codes.
  if (isDatabaseUnavailable(error)) {
    noteDatabaseUnavailable(error, ar.url.pathname);
    return outageRedirect(ar, { json, setCookies });
  }
  if (error instanceof AuthError) {
    log("warn", "auth-failure", { code: error.code, reason: error.message, cause: error.cause, path: ar.url.pathname });
    if (error.landing !== null) return redirectResponse(`${ar.origin}${error.landing}`, { json, setCookies });
    const extra: Record<string, string> = error.code === "CredentialsSignin" ? { code: "credentials", ...error.params } : { ...error.params };
    if (error.code === "RateLimited" && error.retryAfterSeconds !== null) {
      extra.minutes = String(retryAfterMinutes(error.retryAfterSeconds));
      if (error.limit !== null && LIMIT_KIND[error.limit] !== "own") extra.limit = LIMIT_KIND[error.limit];
      const response = errorRedirect(ar, error.code, { json, extra, setCookies });
      response.headers.set("Retry-After", String(error.retryAfterSeconds));
      return response;
    }
    return errorRedirect(ar, error.code, { json, extra, setCookies });
  }
  log("error", "auth-unexpected-error", { error, path: ar.url.pathname });
  return errorRedirect(ar, "Configuration", { json, setCookies });
}

export type ParsedPost = { ar: AuthRequest; body: Body; json: boolean };

/**
 * Reads a POST for an auth endpoint: its body (size-limited, form or JSON) and whether it wants
 * the JSON-redirect answer. A bad body comes back as the response to send.
 */
export async function parsePost(request: Request): Promise<ParsedPost | Response> {
  const ar = authRequest(request);
  try {
    const body = await readBody(request);
    return { ar, body, json: wantsJsonRedirect(request, body) };
  } catch (error) {
    return failureResponse(ar, error, false);
  }
}

/** What finishing a sign-in needs from the request that finishes it. */
export type FinishContext = Pick<FlowContext, "ar" | "json" | "callbackUrl" | "setCookies">;

/**
 * Creates the session, proving `factors`, and sends the visitor on: to the callback URL, or to
 * /welcome when new. The one way a session starts, after a first factor alone or after the
 * second-factor page (signin/two-factor-page.server.ts).
 */
export async function startSession(ctx: FinishContext, providerId: string, result: SignInResult, factors: readonly string[]): Promise<Response> {
  const { ar } = ctx;
  const sessionCookies = await createSession(ar, result.user, { method: providerId, factors, credentialRef: result.credentialRef ?? null });
  // Every successful sign-in, whatever the method: this browser now has this account's own
  // credentials budget (ADR 035).
  let newDevice = false;
  if (result.user.email) {
    const cookies = { cookies: ar.cookies, secure: ar.secure, secrets: ar.config.secrets };
    // After a "This wasn't me" report, the account's notes in device cookies written before it
    // count for nothing (ADR 081, 108): the reported browser is a new device again.
    const userId = result.user.id;
    newDevice = ar.config.securityEmails && !result.isNewUser && (await deviceIdFor(cookies, result.user.email, () => devicesResetAt(userId))) === null;
    sessionCookies.push(await issueDeviceCookie(cookies, result.user.email));
    // And the consecutive-failure count starts again (ADR 083): the owner got in.
    await clearConsecutiveFailures(ar.config.rateLimits, result.user.email);
  }
  // A new account keeps the language of the browser that made it (ADR 108): every e-mail to its
  // owner is written in it. A sign-in to an existing account never changes it (a thief's looks
  // the same as the owner's).
  if (result.isNewUser) await rememberLocale(result.user.id, currentLocale());
  await recordEvent("signin", {
    userId: result.user.id,
    ...eventSource(ar),
    // The credentialRef too (opaque here), so the activity list can name a sign-in through an
    // organization's connection by its organization.
    detail: { provider: providerId, isNewUser: result.isNewUser, strategy: ar.config.sessionStrategy, factors, ...(result.credentialRef ? { credentialRef: result.credentialRef } : {}) },
  });
  // A browser that never signed in to this account (no device cookie naming it): the owner is told,
  // coalesced per account and hour (ADR 109). Not for the sign-in that
  // created the account.
  if (newDevice) await notifyNewDeviceSignIn(ar, result.user.id);
  const target = result.isNewUser
    ? `${ar.origin}/welcome?${new URLSearchParams({ callbackUrl: toRelative(ctx.callbackUrl) })}`
    : ctx.callbackUrl;
  return redirectResponse(target, { json: ctx.json, setCookies: [...ctx.setCookies, ...sessionCookies] });
}

/**
 * What a disabled user's sign-in answers (ADR 078): each method's own answer to credentials that do
 * not sign in — a wrong password, a used or expired link or code, a provider's failed callback, a
 * passkey that did not verify — so the answer tells nothing the method would not tell anyway.
 * (Credentials refuse before this, in their strategy, so that the rate limits count it too.)
 */
const DISABLED_ANSWER: Record<ProviderType, AuthErrorCode> = {
  credentials: "CredentialsSignin",
  email: "Verification",
  oauth: "OAuthCallback",
  oidc: "OAuthCallback",
  webauthn: "WebAuthnVerificationError",
};

/**
 * A rule every sign-in and re-authentication meets once its first factor is proved, before any
 * second factor and before a password reset is written: an organization's policy (ADR 165, 166),
 * registered by the composition root (registry.server.ts) so the flow imports no organization.
 * `refuse`: the answer instead of a session; `requireMfa`: a second factor as AUTH_REQUIRE_MFA asks one.
 */
export type SignInRule = (ar: AuthRequest, attempt: { userId: string; method: string; purpose: "signin" | "reauth" | "second-factor" }) => Promise<{ refuse: AuthError } | { requireMfa: boolean }>;
let signInRule: SignInRule | null = null;

export function registerSignInRule(rule: SignInRule | null): void {
  signInRule = rule;
}

async function ruleVerdict(ar: AuthRequest, attempt: Parameters<SignInRule>[1]): Promise<{ refuse: AuthError } | { requireMfa: boolean }> {
  return signInRule ? signInRule(ar, attempt) : { requireMfa: false };
}

/**
 * The rule again when the second factor completes a pending sign-in (the two-factor page): a
 * policy turned on between the two factors refuses it. Null: it may go on.
 */
export async function secondFactorRefusal(ar: AuthRequest, userId: string, method: string): Promise<AuthError | null> {
  const verdict = await ruleVerdict(ar, { userId, method, purpose: "second-factor" });
  return "refuse" in verdict ? verdict.refuse : null;
}

/**
 * The first factor succeeded. A user who turned the second factor on — or, under AUTH_REQUIRE_MFA,
 * who has a passkey (ADR 104) — gets no session yet: a sealed pending sign-in and the
 * second-factor page (`{url}` of it in JSON mode) — unless the method proves two factors by itself
 * (a passkey). Everyone else is signed in at once.
 *
 * `reset` (a password reset proved by its link or code): the new password is written, and every
 * session ended, only when the sign-in completes — for a user with the second factor on, after the
 * code, its hash sealed in the pending sign-in meanwhile (ADR 062), so the mailbox alone changes
 * nothing and signs nobody out.
 */
export async function completeSignIn(
  ctx: FinishContext & Pick<FlowContext, "providerType">,
  providerId: string,
  result: SignInResult,
  reset: { passwordHash: string; floorMet: number; address: string } | null = null,
): Promise<Response> {
  const { ar } = ctx;
  // Before the second factor: a disabled user with one on must not learn that the first was right.
  if (await isDisabled(result.user.id)) {
    await recordEvent("signin-failed", { userId: result.user.id, ...eventSource(ar), detail: { provider: providerId, reason: "disabled" } });
    const error = new AuthError(DISABLED_ANSWER[ctx.providerType], { log: "user disabled" });
    return failureResponse(ar, error, ctx.json, ctx.setCookies);
  }
  // An account linked to the signed-in user: no sign-in happened, the owner keeps this session
  // (a new one would end it, and a copy of it would decide who stays signed in).
  if (result.linked) return redirectResponse(ctx.callbackUrl, { json: ctx.json, setCookies: ctx.setCookies });
  // The organization's policy: refused here, nothing is written (a reset's new password neither).
  const verdict = await ruleVerdict(ar, { userId: result.user.id, method: providerId, purpose: "signin" });
  if ("refuse" in verdict) {
    await recordEvent("signin-failed", { userId: result.user.id, ...eventSource(ar), detail: { provider: providerId, reason: "policy" } });
    return failureResponse(ar, verdict.refuse, ctx.json, ctx.setCookies);
  }
  const stepConfig = verdict.requireMfa ? { ...ar.config, requireMfa: true } : ar.config;
  if (needsSecondFactor(ctx.providerType) && (await secondStepOf(result.user.id, stepConfig))) {
    const pending = await issuePendingSignIn(ar, {
      userId: result.user.id,
      method: providerId,
      firstFactor: firstFactorOf(ctx.providerType),
      callbackUrl: ctx.callbackUrl,
      isNewUser: result.isNewUser,
      passwordHash: reset?.passwordHash ?? null,
      passwordFloorMet: reset?.floorMet ?? null,
      passwordResetAddress: reset?.address ?? null,
      credentialRef: result.credentialRef ?? null,
    });
    return redirectResponse(`${ar.origin}${ar.config.basePath}/two-factor`, { json: ctx.json, setCookies: [...ctx.setCookies, pending] });
  }
  // Someone else's first factor may still wait in this browser (a family's shared computer): a
  // sign-in that needs no code ends it, as one that needs a code replaces it.
  const setCookies = ar.cookies.has(ar.names.twoFactor) ? [...ctx.setCookies, ...clearPendingSignIn(ar)] : ctx.setCookies;
  if (reset) await applyPasswordReset(ar, result.user.id, reset.passwordHash, reset.floorMet, reset.address);
  return startSession({ ...ctx, setCookies }, providerId, result, factorsOf(ctx.providerType));
}

/**
 * Runs the provider's remix-auth strategy (ctx.authenticate). A resolved user completes the sign-in; a thrown
 * redirect (a protocol hop such as "go to the IdP" or "check your e-mail") is passed on with the
 * flow's cookies, as `{url}` in JSON-redirect mode.
 */
export async function runStrategy(ctx: FlowContext, providerId: string): Promise<Response> {
  let result: SignInResult;
  try {
    result = await ctx.authenticate();
  } catch (caught) {
    let thrown = caught;
    // Past the consecutive-failure ceiling (ADR 083): the e-mailed code the endpoint sends; a
    // caller without that step answers as for a wrong password (the same for right and wrong).
    if (thrown instanceof EmailStepUpRequired) {
      try {
        thrown = ctx.emailStepUp
          ? await ctx.emailStepUp(thrown.address, { send: thrown.send })
          : new AuthError("CredentialsSignin", { log: "consecutive-failure ceiling without an e-mail step" });
      } catch (error) {
        thrown = error;
      }
    }
    if (thrown instanceof Response && thrown.headers.has("Location")) {
      return redirectResponse(thrown.headers.get("Location")!, {
        json: ctx.json,
        setCookies: [...ctx.setCookies, ...thrown.headers.getSetCookie()],
      });
    }
    return failureResponse(ctx.ar, thrown, ctx.json, ctx.setCookies);
  }
  return completeSignIn(ctx, providerId, result);
}

// Re-authentication (ADR 080): the signed-in user proved one of their own
// factors again on /auth/reauth. With the second factor on (and a factor it covers), the two-factor
// page comes next, marked with the session it re-authenticates; then — or at once — that session
// is renewed (a new id and cookie, recent from now; signed-in user, sign-in start and method
// unchanged, the factors just proved added), the audit trail says `reauthenticated`, and the
// browser goes back to the page it came from. Nothing here starts a session for anyone: a browser
// whose session is not the one that started the re-authentication any more gets the sign-in page.

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
  const renewed = await renewAuthentication(ctx.ar, session, { factors });
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
  // A re-authentication is a sign-in for the policy: requireSso refuses one by another way.
  const verdict = await ruleVerdict(ctx.ar, { userId: session.userId, method, purpose: "reauth" });
  if ("refuse" in verdict) {
    // Back to the re-authentication page with the refusal: the visitor is signed in, and the
    // sign-in page would show only that.
    const landing = `${ctx.ar.config.basePath}/reauth?${new URLSearchParams({ callbackUrl: toRelative(ctx.callbackUrl), error: verdict.refuse.code })}`;
    return failureResponse(ctx.ar, new AuthError(verdict.refuse.code, { log: verdict.refuse.message, landing }), ctx.json, ctx.setCookies);
  }
  const stepConfig = verdict.requireMfa ? { ...ctx.ar.config, requireMfa: true } : ctx.ar.config;
  if (needsSecondFactor(providerType) && (await secondStepOf(session.userId, stepConfig))) {
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
  return renewReauthenticated(ctx, session, method, factorsOf(providerType));
}
