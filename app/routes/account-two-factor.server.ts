// The /account action's second-factor intents (totp-start, totp-confirm, totp-disable,
// recovery-codes), kept here so account.server.ts only dispatches: app/auth/two-factor answers in
// plain outcomes, this wraps them in react-router's data() for the page.
import { data, redirect } from "react-router";
import { accountNoticeAt } from "~/components/account-sections";
import { t } from "~/i18n/t.server";
import { addSessionFactors, type AuthRequest, type CurrentSession } from "~/auth/core";
import { confirmTotp, disableTotp, replaceRecoveryCodes, startTotp, type EnrolmentOutcome } from "~/auth/two-factor";
import { db } from "~/db/client.server";
import { mfaRequiredFor, passwordBelowSingleFactorFloor } from "~/auth/accounts";
import { answersInPlace, enrolmentRefusedRedirect } from "./account-refusal.server";

export const TWO_FACTOR_INTENTS = ["totp-start", "totp-confirm", "totp-disable", "recovery-codes"] as const;
type TwoFactorIntent = (typeof TWO_FACTOR_INTENTS)[number];

export function isTwoFactorIntent(intent: unknown): intent is TwoFactorIntent {
  return (TWO_FACTOR_INTENTS as readonly unknown[]).includes(intent);
}

export async function twoFactorIntent(ar: AuthRequest, session: CurrentSession, intent: TwoFactorIntent, body: Record<string, unknown>) {
  const { userId } = session;
  const user = await db().user.findUnique({ where: { id: userId }, select: { id: true, email: true, name: true } });
  if (!user) return data({ formError: t("common.accountGone"), fieldErrors: {} }, { status: 404 });
  // Off with a password not known to meet the single-factor floor: a longer password first (ADR
  // 084), checked before the code so that no code is spent on a refusal.
  if (intent === "totp-disable" && (await passwordBelowSingleFactorFloor(userId, ar.config))) {
    const min = ar.config.passwordMinLength;
    return data(
      { formError: t("twoFactor.disableNeedsLongerPassword", { min }), fieldErrors: {}, twoFactorIntent: intent, totpSetup: null, passwordFirst: { min } },
      { status: 400 },
    );
  }
  const outcome: EnrolmentOutcome =
    intent === "totp-start"
      ? await startTotp(ar, user)
      : intent === "totp-confirm"
        ? await confirmTotp(ar, user, body)
        : intent === "totp-disable"
          ? await disableTotp(ar, user, body)
          : await replaceRecoveryCodes(ar, user, body);
  if (!outcome.ok) {
    // A wrong code: a browser is sent back to the page, which names it (account-refusal.server.ts).
    if (outcome.refused && outcome.status === 400 && !answersInPlace(ar, body)) throw enrolmentRefusedRedirect(intent, outcome.refused);
    return data(
      {
        formError: outcome.formError ?? null,
        fieldErrors: outcome.codeError ? { code: outcome.codeError } : {},
        twoFactorIntent: intent,
        totpSetup: outcome.setup ?? null,
      },
      { status: outcome.status },
    );
  }
  if (outcome.disabled) throw redirect(accountNoticeAt("two-factor-off"));
  // Under AUTH_REQUIRE_MFA the session that turned the second factor on proved it with the code:
  // it goes on as a two-factor session (ADR 104). In place, not renewed under a new id: this same
  // request renders the page with the recovery codes, and its loader reads the session it carries.
  if (intent === "totp-confirm" && (await mfaRequiredFor(ar.config, session.userId, session.sessionId))) await addSessionFactors(session, ["otp", "mfa"]);
  // The setup and the recovery codes are answered in this response only: never stored for a GET.
  return data({ formError: null, fieldErrors: {}, twoFactorIntent: intent, totpSetup: outcome.setup ?? null, recoveryCodes: outcome.recoveryCodes ?? null });
}
