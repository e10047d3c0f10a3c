// GET|POST /auth/two-factor: the second leg of a sign-in for a user whose second
// factor is on. The first leg (flow.server.ts, completeSignIn) left a sealed pending sign-in; here
// a TOTP code or a recovery code finishes it through startSession, the one way a session starts,
// so the device cookie, the audit trail and the callback URL or welcome page behave as for any
// sign-in. Wrong codes count against the pending sign-in's budget and the account's, or the
// device's for a browser that signed in to the account before (section 10); spending either ends
// the pending sign-in. A right code resets the account's and the device's budgets.
import { applyPasswordReset } from "../accounts/passwords.server";
import { db } from "../../db/client.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { notifySecurityChange } from "../accounts/security-notices.server";
import { toSessionUser } from "../accounts/users.server";
import { toRelative, validateCallbackUrl } from "../core/callback-url.server";
import { ensureCsrfToken, verifyCsrf } from "../core/csrf.server";
import { deviceIdFor } from "../core/device-cookie.server";
import { devicesResetAt } from "../accounts/wasnt-me.server";
import { AuthError } from "../core/errors";
import { isSecondFactorRefusal, pendingSignInFinished, reserveSecondFactorAttempt, spendPendingSignIn, type LimitRefusal } from "../core/limits.server";
import { log } from "../core/log.server";
import { authRequest, type AuthRequest } from "../core/request.server";
import { getSession } from "../core/session.server";
import { errorRedirect, redirectResponse } from "../core/respond.server";
import { clearPendingSignIn, PENDING_SIGN_IN_MAX_AGE, readPendingSignIn, type PendingSignIn } from "../two-factor/pending.server";
import { withSecondFactor } from "../two-factor/policy.server";
import { isUsedTotpCode, secondStepOf, spendSecondFactorCode, type SecondFactor, type SecondStep } from "../two-factor/store.server";
import type { Body } from "../core/body.server";
import { getProviders } from "./registry.server";
import { failureResponse, parsePost, reauthenticatingSession, renewReauthenticated, secondFactorRefusal, startSession } from "./flow.server";
import { t } from "../../i18n/t.server";
import { SECOND_STEP_PARAM } from "../core/messages.server";

/** Longest code field read: a 6-digit code or a 19-character recovery code (ADR 074), with some spacing. */
const MAX_CODE_LENGTH = 64;

/**
 * `code`: the user's TOTP authenticator is on (and so are their recovery codes); `passkey`: they
 * have a passkey, the second factor the page takes with JavaScript (ADR 104).
 */
export type TwoFactorPage = { csrfToken: string; error: string | null; code: boolean; passkey: boolean };

export type TwoFactorOutcome =
  | { type: "page"; status: 200 | 400; page: TwoFactorPage; setCookies: string[] }
  | { type: "response"; response: Response };

/** The pending sign-in is gone (expired, never there, tampered with): back to sign-in, cookie cleared. */
function pendingGone(ar: AuthRequest, json: boolean): Response {
  const setCookies = ar.cookies.has(ar.names.twoFactor) ? clearPendingSignIn(ar) : [];
  return errorRedirect(ar, "TwoFactorExpired", { json, setCookies });
}

/**
 * A code already finished this pending sign-in (a double click, a resubmitted form, a second
 * tab): no second session and nothing counted or recorded as a failure. The browser goes where
 * the sign-in was going; if the first answer's session cookie reached it, it is signed in there.
 */
function alreadyFinished(ar: AuthRequest, pending: PendingSignIn, json: boolean): Response {
  const callbackUrl = validateCallbackUrl(pending.callbackUrl, ar.origin) ?? `${ar.origin}/`;
  return redirectResponse(callbackUrl, { json, setCookies: clearPendingSignIn(ar) });
}

/** The sign-in page's RateLimited after the second step ended: its text adds that a recovery code may be used. */
const SECOND_STEP_LIMITED = { [SECOND_STEP_PARAM]: "two-factor" };

async function endPending(ar: AuthRequest, pending: PendingSignIn, refusal: LimitRefusal, json: boolean): Promise<Response> {
  await recordEvent("rate-limited", { userId: pending.userId, ...eventSource(ar), detail: { bucket: refusal.limit, provider: pending.method } });
  const error = new AuthError("RateLimited", { log: `second-factor limit ${refusal.limit}`, retryAfterSeconds: refusal.retryAfterSeconds, limit: refusal.limit, ...((await stepOf(ar, pending.userId)).code ? { params: SECOND_STEP_LIMITED } : {}) });
  return failureResponse(ar, error, json, clearPendingSignIn(ar));
}

/** What the step offers this user: a code field, a passkey, or both; a code field when they have neither any more. */
async function stepOf(ar: AuthRequest, userId: string): Promise<SecondStep> {
  const step = await secondStepOf(userId, ar.config);
  return step && (step.code || step.passkey) ? step : { code: true, passkey: false };
}

export async function twoFactorPageData(request: Request): Promise<TwoFactorOutcome> {
  const ar = authRequest(request);
  const pending = await readPendingSignIn(ar);
  if (!pending) {
    // Back after the sign-in finished: she is signed in, which the sign-in page shows with the way
    // on — not beside "your sign-in expired", which is about a sign-in that no longer exists.
    const { session } = await getSession(ar, { roll: false });
    const setCookies = ar.cookies.has(ar.names.twoFactor) ? clearPendingSignIn(ar) : [];
    if (session) return { type: "response", response: redirectResponse(`${ar.origin}${ar.config.basePath}/signin`, { setCookies }) };
    return { type: "response", response: pendingGone(ar, false) };
  }
  const csrf = ensureCsrfToken(ar);
  const page = { csrfToken: csrf.token, error: refusalText(ar.url.searchParams), ...(await stepOf(ar, pending.userId)) };
  return { type: "page", status: 200, page, setCookies: csrf.setCookie ? [csrf.setCookie] : [] };
}

/**
 * A refused code or passkey answers with a redirect to this page (Post/Redirect/Get), its refusal
 * in the query: `refused` (which kind) and `tries` (how many are left). Back, after the right code,
 * then lands on a page, never on the answer to a POST (Chromium's "Confirm form resubmission").
 * The query only picks the words; what is counted stays on the server.
 */
const REFUSED_PARAM = "refused";
const TRIES_PARAM = "tries";
const REFUSAL_KEYS = { code: "twoFactor.refused", used: "twoFactor.refusedUsed", passkey: "twoFactor.passkeyRefused" } as const;
type RefusalKind = keyof typeof REFUSAL_KEYS;

function refusedUrl(ar: AuthRequest, kind: RefusalKind, triesLeft: number): string {
  return `${ar.origin}${ar.config.basePath}/two-factor?${new URLSearchParams({ [REFUSED_PARAM]: kind, [TRIES_PARAM]: String(triesLeft) })}`;
}

function refusalText(params: URLSearchParams): string | null {
  const kind = params.get(REFUSED_PARAM);
  if (!kind || !Object.hasOwn(REFUSAL_KEYS, kind)) return null;
  const tries = Number(params.get(TRIES_PARAM));
  const triesLeft = Number.isSafeInteger(tries) && tries >= 0 && tries <= 100 ? tries : 0;
  return t(REFUSAL_KEYS[kind as RefusalKind], { triesLeft });
}

/** The passkey answer of the second step (`action=second-step`, `data`), checked by the method that has one. */
async function provePasskey(ar: AuthRequest, body: Body, userId: string, setCookies: string[]): Promise<boolean> {
  const prover = getProviders(ar.config).find((p) => p.proveSecondStep)?.proveSecondStep;
  return prover ? prover(ar, body, userId, setCookies) : false;
}

/** POST /auth/two-factor: `csrfToken` and `code`. */
export async function twoFactorAction(request: Request): Promise<TwoFactorOutcome> {
  const parsed = await parsePost(request);
  if (parsed instanceof Response) return { type: "response", response: parsed };
  const { ar, body, json } = parsed;
  // A refused CSRF check changes nothing: the pending sign-in and its budgets stay as they were.
  if (!verifyCsrf(ar, body.csrfToken)) return { type: "response", response: errorRedirect(ar, "MissingCSRF", { json }) };
  try {
    return await checkCode(ar, body, json);
  } catch (error) {
    return { type: "response", response: failureResponse(ar, error, json, clearPendingSignIn(ar)) };
  }
}

/** A TOTP or recovery code (`code`), or a passkey's answer (`action=second-step`, `data`; ADR 104). */
async function checkCode(ar: AuthRequest, body: Body, json: boolean): Promise<TwoFactorOutcome> {
  const pending = await readPendingSignIn(ar);
  if (!pending) return { type: "response", response: pendingGone(ar, json) };
  const user = await db().user.findUnique({ where: { id: pending.userId } });
  if (!user) return { type: "response", response: pendingGone(ar, json) };
  const limits = ar.config.rateLimits;
  if (await pendingSignInFinished(limits, pending.id)) return { type: "response", response: alreadyFinished(ar, pending, json) };
  // A re-authentication (ADR 080) finishes only in the session that started it: signed out since,
  // or signed in as someone else, the code has nothing to renew, and none is tried.
  const reauthenticating = pending.reauthOf ? await reauthenticatingSession(ar, pending.userId, pending.reauthOf) : null;
  if (pending.reauthOf && !reauthenticating) return { type: "response", response: pendingGone(ar, json) };
  // A browser that signed in to this account before spends its own budget, not the account's
  // (which anyone with the password can spend with wrong codes).
  const deviceId = user.email ? await deviceIdFor({ cookies: ar.cookies, secure: ar.secure, secrets: ar.config.secrets }, user.email, () => devicesResetAt(pending.userId)) : null;
  const attempt = await reserveSecondFactorAttempt(limits, pending.id, pending.userId, deviceId);
  if (isSecondFactorRefusal(attempt)) {
    // Its twin may have finished it between the check above and this reservation.
    if (await pendingSignInFinished(limits, pending.id)) return { type: "response", response: alreadyFinished(ar, pending, json) };
    return { type: "response", response: await endPending(ar, pending, attempt, json) };
  }

  // The passkey ceremony's cookie, rewritten without the challenge this answer used, goes with every answer.
  const challengeCookies: string[] = [];
  const passkeyAnswer = body.action === "second-step";
  const code = typeof body.code === "string" ? body.code.slice(0, MAX_CODE_LENGTH) : "";
  // Disabled since the first factor (ADR 078): every code or passkey is a wrong one, and none is spent.
  const factor: SecondFactor | { kind: "passkey" } | null = user.disabledAt
    ? null
    : passkeyAnswer
      ? (await provePasskey(ar, body, pending.userId, challengeCookies))
        ? { kind: "passkey" }
        : null
      : code
        ? await spendSecondFactorCode(pending.userId, code, ar.config.secrets)
        : null;
  if (factor) {
    // Finished first, so that a twin request of the same pending sign-in sees it as soon as possible.
    await spendPendingSignIn(limits, pending.id, PENDING_SIGN_IN_MAX_AGE);
    await attempt.rightCode();
    if (factor.kind === "recovery") {
      await recordEvent("recovery-code-used", { userId: user.id, ...eventSource(ar), detail: { provider: pending.method, left: factor.left } });
      await notifySecurityChange(ar, user.id, { kind: "recovery-code-used", left: factor.left });
    }
    // The organization's policy again (ADR 165): turned on since the first factor, it refuses here,
    // before a waiting reset is written.
    const refusal = await secondFactorRefusal(ar, user.id, pending.method);
    if (refusal) return { type: "response", response: failureResponse(ar, refusal, json, [...challengeCookies, ...clearPendingSignIn(ar)]) };
    // A reset waiting for this code (ADR 062): only now is the password written and every session ended.
    if (pending.passwordHash) await applyPasswordReset(ar, user.id, pending.passwordHash, pending.passwordFloorMet, pending.passwordResetAddress);
    let callbackUrl = validateCallbackUrl(pending.callbackUrl, ar.origin) ?? `${ar.origin}/`;
    if (factor.kind === "recovery") callbackUrl = recoveryCodeUsedUrl(ar, callbackUrl);
    if (reauthenticating) {
      const factors = withSecondFactor(pending.firstFactor, factor.kind);
      const response = await renewReauthenticated({ ar, json, callbackUrl, setCookies: [...challengeCookies, ...clearPendingSignIn(ar)] }, reauthenticating, pending.method, factors);
      return { type: "response", response };
    }
    const response = await startSession(
      { ar, json, callbackUrl, setCookies: [...challengeCookies, ...clearPendingSignIn(ar)] },
      pending.method,
      { user: toSessionUser(user), isNewUser: pending.isNewUser, credentialRef: pending.credentialRef },
      withSecondFactor(pending.firstFactor, factor.kind),
    );
    return { type: "response", response };
  }

  // The same code submitted twice at once: the twin finished the sign-in while this one checked.
  if (await pendingSignInFinished(limits, pending.id)) {
    await attempt.refund();
    return { type: "response", response: alreadyFinished(ar, pending, json) };
  }
  await recordEvent("two-factor-failed", { userId: user.id, ...eventSource(ar), detail: { provider: pending.method } });
  const triesLeft = attempt.triesLeftIfWrong;
  log("info", "two-factor-refused", { triesLeft });
  if (attempt.endsIfWrong) return { type: "response", response: await endPending(ar, pending, attempt.endsIfWrong, json) };
  if (json) {
    const url = `${ar.origin}${ar.config.basePath}/two-factor?${new URLSearchParams({ error: "TwoFactorRequired" })}`;
    return { type: "response", response: redirectResponse(url, { json, setCookies: challengeCookies }) };
  }
  const used = !passkeyAnswer && code !== "" && (await isUsedTotpCode(pending.userId, code, ar.config.secrets));
  const kind: RefusalKind = passkeyAnswer ? "passkey" : used ? "used" : "code";
  return { type: "response", response: redirectResponse(refusedUrl(ar, kind, triesLeft), { setCookies: challengeCookies }) };
}

/**
 * Where a sign-in finished by a recovery code goes (ADR 074): /account, which says how many codes
 * are left and offers new ones, with a link on to where the sign-in was going.
 */
const ACCOUNT_PATH = "/account";
function recoveryCodeUsedUrl(ar: AuthRequest, callbackUrl: string): string {
  const url = new URL(ACCOUNT_PATH, ar.origin);
  url.searchParams.set("updated", "recovery-code-used");
  const onward = toRelative(callbackUrl);
  if (new URL(callbackUrl).pathname !== ACCOUNT_PATH) url.searchParams.set("callbackUrl", onward);
  url.hash = "two-factor";
  return url.toString();
}

/** JSON-mode clients (json=true, X-Auth-Return-Redirect: 1) always get a Response: `{url}`. */
export async function twoFactorJsonAction(request: Request): Promise<Response> {
  const outcome = await twoFactorAction(request);
  if (outcome.type === "response") return outcome.response;
  const ar = authRequest(request);
  return redirectResponse(`${ar.origin}${ar.config.basePath}/two-factor`, { json: true });
}
