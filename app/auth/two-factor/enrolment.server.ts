// The /account intents of the second factor: totp-start, totp-confirm,
// totp-disable, recovery-codes. Plain outcomes: the route wraps them for the page. Turning the
// factor off or replacing the codes needs a current code (a TOTP code or an unused recovery code),
// and wrong codes there count against the account's second-factor budget (section 10), so a
// stolen session cannot guess its way to removing the factor.
import { actorEventFields, isOperator, type Actor } from "../accounts/actor";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { passwordBelowSingleFactorFloor } from "../accounts/passwords.server";
import { notifySecurityChange } from "../accounts/security-notices.server";
import { limitMessage } from "../core/messages.server";
import { isSecondFactorRefusal, reserveSecondFactorAttempt } from "../core/limits.server";
import type { AuthRequest } from "../core/request.server";
import {
  confirmEnrolment,
  pendingEnrolmentSecret,
  regenerateRecoveryCodes,
  removeSecondFactor,
  secondFactorEnabled,
  isUsedTotpCode,
  spendSecondFactorCode,
  startEnrolment,
  twoFactorStatus,
} from "./store.server";
import { otpauthUri, qrCodePath } from "./totp.server";
import { t } from "../../i18n/t.server";

/** What the page needs to show an enrolment in progress: the secret as text and as a QR code. */
export type TotpSetup = { secret: string; uri: string; qr: { size: number; path: string } };

export type EnrolmentOutcome =
  | { ok: true; setup?: TotpSetup; recoveryCodes?: string[]; disabled?: boolean }
  | { ok: false; status: 400 | 409 | 429; formError?: string; codeError?: string; setup?: TotpSetup; refused?: EnrolmentRefusal };

/** Which words a wrong code's refusal shows, for a browser sent back to /account (Post/Redirect/Get). */
export type EnrolmentRefusal = "setupCodeWrong" | "codeWrong" | "codeUsed";

type User = { id: string; email: string | null; name: string | null };

const MAX_CODE_LENGTH = 64;
const codeOf = (body: Record<string, unknown>) => (typeof body.code === "string" ? body.code.slice(0, MAX_CODE_LENGTH).trim() : "");

function setupFor(user: User, secret: string): TotpSetup {
  const uri = otpauthUri(secret, user.email ?? user.name ?? user.id);
  return { secret, uri, qr: qrCodePath(uri) };
}

/** The set-up still waiting for its first code, shown again on the page a refused code leads back to; null when none. */
export async function pendingTotpSetup(ar: AuthRequest, user: User): Promise<TotpSetup | null> {
  const secret = await pendingEnrolmentSecret(user.id, ar.config.secrets);
  return secret ? setupFor(user, secret) : null;
}

export async function startTotp(ar: AuthRequest, user: User): Promise<EnrolmentOutcome> {
  const secret = await startEnrolment(user.id, ar.config.secrets);
  if (!secret) return { ok: false, status: 409, formError: t("twoFactor.alreadyOn") };
  return { ok: true, setup: setupFor(user, secret) };
}

export async function confirmTotp(ar: AuthRequest, user: User, body: Record<string, unknown>): Promise<EnrolmentOutcome> {
  const outcome = await confirmEnrolment(user.id, codeOf(body), ar.config.secrets);
  if (outcome.ok) {
    await recordEvent("two-factor-enabled", { userId: user.id, ...eventSource(ar), detail: { kind: "totp" } });
    await notifySecurityChange(ar, user.id, { kind: "second-factor-on" });
    return { ok: true, recoveryCodes: outcome.recoveryCodes };
  }
  if (outcome.reason === "not-started") {
    const status = await twoFactorStatus(user.id);
    return { ok: false, status: 409, formError: status.enabled ? t("twoFactor.alreadyOn") : t("twoFactor.notStarted") };
  }
  // The setup stays on screen so the visitor can try the next code.
  const secret = await pendingEnrolmentSecret(user.id, ar.config.secrets);
  return { ok: false, status: 400, codeError: t("twoFactor.wrongSetupCode"), refused: "setupCodeWrong", ...(secret ? { setup: setupFor(user, secret) } : {}) };
}

/** A current code for the account, counted against its budget when wrong. */
async function checkCurrentCode(ar: AuthRequest, user: User, body: Record<string, unknown>): Promise<EnrolmentOutcome | null> {
  if (!(await twoFactorStatus(user.id)).enabled) return { ok: false, status: 409, formError: t("twoFactor.notOn") };
  const attempt = await reserveSecondFactorAttempt(ar.config.rateLimits, null, user.id);
  if (isSecondFactorRefusal(attempt)) return { ok: false, status: 429, formError: limitMessage(attempt) };
  const factor = await spendSecondFactorCode(user.id, codeOf(body), ar.config.secrets);
  if (factor) {
    await attempt.rightCode();
    if (factor.kind === "recovery") {
      await recordEvent("recovery-code-used", { userId: user.id, ...eventSource(ar), detail: { left: factor.left } });
      await notifySecurityChange(ar, user.id, { kind: "recovery-code-used", left: factor.left });
    }
    return null;
  }
  await recordEvent("two-factor-failed", { userId: user.id, ...eventSource(ar), detail: { on: "account" } });
  if (attempt.endsIfWrong) return { ok: false, status: 429, formError: limitMessage(attempt.endsIfWrong) };
  const used = await isUsedTotpCode(user.id, codeOf(body), ar.config.secrets);
  return { ok: false, status: 400, codeError: used ? t("twoFactor.codeUsed") : t("twoFactor.wrongCode"), refused: used ? "codeUsed" : "codeWrong" };
}

export async function disableTotp(ar: AuthRequest, user: User, body: Record<string, unknown>): Promise<EnrolmentOutcome> {
  const refused = await checkCurrentCode(ar, user, body);
  if (refused) return refused;
  await removeSecondFactor(user.id);
  await recordEvent("two-factor-disabled", { userId: user.id, ...eventSource(ar), detail: { kind: "totp" } });
  await notifySecurityChange(ar, user.id, { kind: "second-factor-off" });
  return { ok: true, disabled: true };
}

/**
 * An admin turns the second factor off for a user who lost it: the same
 * removal as totp-disable, an audit event naming the admin, and the security e-mail to the user.
 * Nothing to turn off: nothing changes and nothing is sent. Refused, changing nothing, when the
 * user's password is not known to meet the single-factor floor (ADR 084, 104): it would be left
 * as the only factor; the user chooses a longer one first.
 */
export async function turnOffSecondFactorFor(
  ar: AuthRequest,
  userId: string,
  actor: Actor,
): Promise<{ changed: boolean; refused?: undefined } | { changed: false; refused: "short-password"; min: number }> {
  if (!(await secondFactorEnabled(userId))) return { changed: false };
  if (await passwordBelowSingleFactorFloor(userId, ar.config)) return { changed: false, refused: "short-password", min: ar.config.passwordMinLength };
  await removeSecondFactor(userId);
  await recordEvent("two-factor-disabled", actorEventFields(actor, userId, { kind: "totp" }));
  await notifySecurityChange(ar, userId, { kind: "second-factor-off" }, { byOperator: isOperator(actor) });
  return { changed: true };
}

export async function replaceRecoveryCodes(ar: AuthRequest, user: User, body: Record<string, unknown>): Promise<EnrolmentOutcome> {
  const refused = await checkCurrentCode(ar, user, body);
  if (refused) return refused;
  const recoveryCodes = await regenerateRecoveryCodes(user.id);
  await recordEvent("recovery-codes-replaced", { userId: user.id, ...eventSource(ar) });
  await notifySecurityChange(ar, user.id, { kind: "recovery-codes-replaced" });
  return { ok: true, recoveryCodes };
}
