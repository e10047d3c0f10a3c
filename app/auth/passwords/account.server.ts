// The /account intents (each after the recent sign-in check of the
// /account route, ADR 058): password-set, password-change (the current password; ends every other session) and password-remove
// (never the last way to sign in, checked and removed in one step: ADR 026). Each answers with
// what the page shows: a redirect on success, or the refused field and its text.
import { eventSource, recordEvent } from "../accounts/audit.server";
import { notifySecurityChange } from "../accounts/security-notices.server";
import { createPassword, passwordHashOf, replacePassword } from "../accounts/passwords.server";
import { deviceIdFor } from "../core/device-cookie.server";
import { devicesResetAt } from "../accounts/wasnt-me.server";
import { limitMessage } from "../core/messages.server";
import { countConsecutiveFailure, isLimitRefusal, reserveCredentialsAttempt } from "../core/limits.server";
import { clientAddress, type AuthRequest } from "../core/request.server";
import { refreshSession, revokeUserSessions, type CurrentSession } from "../core/session.server";
import { toSessionUser } from "../accounts/users.server";
import { MAX_PASSWORD_LENGTH, hashPassword, verifyPassword } from "../credentials/password.server";
import { checkPassword, singleFactorFloorMet } from "../credentials/password-policy.server";
import { secondFactorEnabled } from "../two-factor/store.server";
import { removeSignInMethod } from "../signin/methods.server";
import type { PasswordRefusal } from "../core/errors";
import { db } from "../../db/client.server";
import { t } from "../../i18n/t.server";

export const PASSWORD_INTENTS = ["password-set", "password-change", "password-remove"] as const;
export type PasswordIntent = (typeof PASSWORD_INTENTS)[number];

export function isPasswordIntent(intent: unknown): intent is PasswordIntent {
  return (PASSWORD_INTENTS as readonly unknown[]).includes(intent);
}

export type PasswordIntentResult =
  | { ok: true; notice: "password-set" | "password-changed" | "password-removed"; setCookies: string[] }
  | {
      ok: false;
      status: number;
      intent: PasswordIntent;
      field: "password" | "currentPassword" | null;
      message: string;
      retryAfterSeconds?: number;
      /** Which words, for a browser sent back to /account (Post/Redirect/Get): a new password's policy reason, or the current password refused. */
      refused?: PasswordRefusal | "currentWrong";
    };

const text = (value: unknown) => (typeof value === "string" && value.length <= MAX_PASSWORD_LENGTH ? value : "");

/** The user's address, the limits' name for the account (a user without one is named by id). */
async function accountOf(userId: string) {
  return db().user.findUnique({ where: { id: userId }, select: { id: true, email: true, name: true, image: true } });
}

/**
 * The current password, checked as a credentials attempt: the same limits,
 * a wrong one counted as a failure, a right one resetting the counters.
 */
async function checkCurrentPassword(
  ar: AuthRequest,
  userId: string,
  email: string | null,
  typed: string,
  intent: PasswordIntent,
): Promise<PasswordIntentResult | null> {
  const address = email ?? `user:${userId}`;
  const deviceId = email ? await deviceIdFor({ cookies: ar.cookies, secure: ar.secure, secrets: ar.config.secrets }, email, () => devicesResetAt(userId)) : null;
  const reservation = await reserveCredentialsAttempt(ar.config.rateLimits, { address, client: clientAddress(ar), deviceId });
  if (isLimitRefusal(reservation)) {
    await recordEvent("rate-limited", { userId, ...eventSource(ar), detail: { bucket: reservation.limit } });
    return {
      ok: false,
      status: 429,
      intent,
      field: "currentPassword",
      message: limitMessage(reservation),
      retryAfterSeconds: reservation.retryAfterSeconds,
    };
  }
  const stored = await passwordHashOf(userId);
  const ok = stored !== null && typed !== "" && (await verifyPassword(stored, typed));
  await reservation.settle(ok);
  if (ok) return null;
  // One more wrong password against the account: ADR 083's ceiling counts them wherever typed.
  if (email) await countConsecutiveFailure(ar.config.rateLimits, email);
  await recordEvent("signin-failed", { userId, ...eventSource(ar), detail: { provider: "credentials", intent } });
  return { ok: false, status: 400, intent, field: "currentPassword", message: t("password.currentWrong"), refused: "currentWrong" };
}

export async function passwordIntent(
  ar: AuthRequest,
  session: CurrentSession,
  intent: PasswordIntent,
  body: Record<string, unknown>,
): Promise<PasswordIntentResult> {
  const userId = session.userId;
  const user = await accountOf(userId);
  if (!user) return { ok: false, status: 404, intent, field: null, message: t("password.notSet") };
  const stored = await passwordHashOf(userId);
  // While the second factor is on, 8 characters are enough (ADR 075).
  const secondFactor = await secondFactorEnabled(userId);

  if (intent === "password-set") {
    if (stored !== null) return { ok: false, status: 400, intent, field: "password", message: t("password.alreadySet") };
    const policy = await checkPassword(text(body.password), { email: user.email, name: user.name, secondFactor }, ar.config);
    if (!policy.ok) return { ok: false, status: 400, intent, field: "password", message: policy.message, refused: policy.reason };
    if (!(await createPassword(userId, await hashPassword(policy.password), singleFactorFloorMet(policy.password, ar.config)))) {
      return { ok: false, status: 400, intent, field: "password", message: t("password.alreadySet") };
    }
    await recordEvent("password-set", { userId, ...eventSource(ar) });
    await notifySecurityChange(ar, userId, { kind: "password-set" });
    return { ok: true, notice: "password-set", setCookies: [] };
  }

  if (stored === null) return { ok: false, status: 400, intent, field: "currentPassword", message: t("password.notSet") };

  if (intent === "password-change") {
    // Prove, then judge (ADR 103): the current password first. A copy of the session cookie
    // without it learns nothing of the account's rules (its floor, its name's words).
    const refused = await checkCurrentPassword(ar, userId, user.email, text(body.currentPassword), intent);
    if (refused) return refused;
    const policy = await checkPassword(text(body.password), { email: user.email, name: user.name, secondFactor }, ar.config);
    if (!policy.ok) return { ok: false, status: 400, intent, field: "password", message: policy.message, refused: policy.reason };
    if (!(await replacePassword(userId, stored, await hashPassword(policy.password), singleFactorFloorMet(policy.password, ar.config)))) {
      // Another tab changed it between our read and our write: this one's current password is stale.
      return { ok: false, status: 400, intent, field: "currentPassword", message: t("password.currentWrong"), refused: "currentWrong" };
    }
    // Every other session ends on every instance. This browser's jwt is written again from the
    // cookie it carried (refreshSession, as after an e-mail change), so that it is issued after the
    // cut-off; reading it back first (reissueSession) would find it under that cut-off once the
    // sign-in was more than a second ago.
    const count = await revokeUserSessions(userId, { except: session.sessionId });
    await recordEvent("password-changed", { userId, ...eventSource(ar), detail: { count } });
    await notifySecurityChange(ar, userId, { kind: "password-changed" });
    // kept: this session was spared by the revocation just written (its cut-off does not apply).
    const refreshed = await refreshSession(ar, toSessionUser(user), { kept: true });
    return { ok: true, notice: "password-changed", setCookies: refreshed.setCookies };
  }

  // password-remove
  const refused = await checkCurrentPassword(ar, userId, user.email, text(body.currentPassword), intent);
  if (refused) return refused;
  const removed = await removeSignInMethod(ar.config, userId, { kind: "password" });
  if (removed === "last-method") return { ok: false, status: 409, intent, field: "currentPassword", message: t("password.lastMethod") };
  if (removed === "not-found") return { ok: false, status: 400, intent, field: "currentPassword", message: t("password.notSet") };
  await recordEvent("password-removed", { userId, ...eventSource(ar) });
  await notifySecurityChange(ar, userId, { kind: "password-removed" });
  return { ok: true, notice: "password-removed", setCookies: [] };
}
