// A refused /account form answers a browser with a redirect back to the page (Post/Redirect/Get),
// so Back after the next, right, try lands on a page, never on the answer to a POST (Chromium's
// "Confirm form resubmission", ERR_CACHE_MISS under no-store). The address names only which words
// to show — `refused` (and a new password's policy `reason`) and the form's `intent` — never what
// was typed; the page shows them in the form's section (`#<section>-notice`). JSON clients
// (X-Auth-Return-Redirect: 1, json=true) get the form answer as before.
import { redirect } from "react-router";
import { ACCOUNT_SECTION, noticeAnchor, type AccountSection } from "~/components/account-sections";
import { wantsJsonRedirect } from "~/auth/core/respond.server";
import type { AuthRequest } from "~/auth/core";
import { passwordRefusalFromQuery, passwordRefusalOf, passwordRefusalQuery } from "~/auth/credentials/password-policy.server";
import type { PasswordRefusal } from "~/auth/core/errors";
import type { NameRefusal } from "~/auth/core/display-text";
import { pendingTotpSetup, type EnrolmentRefusal, type TotpSetup } from "~/auth/two-factor";
import { t } from "~/i18n/t.server";
import type { MessageKey } from "~/i18n/catalogues/en";

const REFUSED_PARAM = "refused";
const INTENT_PARAM = "intent";

/** What the page knows that a refusal's words name: the floor of a new password, the word deletion asks for. */
type Context = { passwordFloor: number; deleteWord: string; params: URLSearchParams };
type Words = MessageKey | ((c: Context) => string | null);

const NAME_MAX_PARAM = "max";
const NAME_LENGTH_PARAM = "length";
const count = (value: string | null) => {
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 0 && n <= 100_000 ? n : null;
};

/** Each refusal's words, the section it is shown in, the field it is about and the forms that can name it. */
const REFUSALS = {
  setupCodeWrong: { section: ACCOUNT_SECTION.twoFactor, field: "code", words: "twoFactor.wrongSetupCode", intents: ["totp-confirm"] },
  codeWrong: { section: ACCOUNT_SECTION.twoFactor, field: "code", words: "twoFactor.wrongCode", intents: ["totp-disable", "recovery-codes"] },
  codeUsed: { section: ACCOUNT_SECTION.twoFactor, field: "code", words: "twoFactor.codeUsed", intents: ["totp-disable", "recovery-codes"] },
  currentWrong: { section: ACCOUNT_SECTION.password, field: "currentPassword", words: "password.currentWrong", intents: ["password-change", "password-remove"] },
  newPassword: {
    section: ACCOUNT_SECTION.password,
    field: "password",
    words: (c) => (passwordRefusalOf(c.params.get("reason")) ? passwordRefusalFromQuery(c.params, c.passwordFloor)!.message : null),
    intents: ["password-set", "password-change"],
  },
  deleteWord: { section: ACCOUNT_SECTION.deleteAccount, field: "confirm", words: (c) => t("lifecycle.deleteWrongWord", { word: c.deleteWord }), intents: ["account-delete"] },
  nameEmpty: { section: ACCOUNT_SECTION.profile, field: "name", words: "account.nameEmpty", intents: ["update-profile"] },
  nameNotText: { section: ACCOUNT_SECTION.profile, field: "name", words: "name.notText", intents: ["update-profile"] },
  nameTooLong: {
    section: ACCOUNT_SECTION.profile,
    field: "name",
    words: (c) => {
      const max = count(c.params.get(NAME_MAX_PARAM));
      const length = count(c.params.get(NAME_LENGTH_PARAM));
      return max === null || length === null ? null : t("name.tooLong", { max, length });
    },
    intents: ["update-profile"],
  },
  emailInvalid: { section: ACCOUNT_SECTION.email, field: "email", words: "emailChange.invalid", intents: ["change-email"] },
  emailSame: { section: ACCOUNT_SECTION.email, field: "email", words: "emailChange.same", intents: ["change-email"] },
} as const satisfies Record<string, { section: AccountSection; field: string; words: Words; intents: readonly string[] }>;

export type AccountRefusal = keyof typeof REFUSALS;

/** True when the answer should stay the form's answer: a JSON client. */
export function answersInPlace(ar: AuthRequest, body: Record<string, unknown>): boolean {
  return wantsJsonRedirect(ar.request, body);
}

/** The redirect back to /account for a refusal: its words named, the section's notice the fragment. */
export function refusedRedirect(kind: AccountRefusal, intent: string, extra: Record<string, string> = {}): Response {
  const query = new URLSearchParams({ [REFUSED_PARAM]: kind, [INTENT_PARAM]: intent, ...extra });
  return redirect(`/account?${query}#${noticeAnchor(REFUSALS[kind].section)}`, 303);
}

/** A refused password form: the kind its reason names. */
export function passwordRefusedRedirect(intent: string, refused: PasswordRefusal | "currentWrong"): Response {
  return refused === "currentWrong" ? refusedRedirect("currentWrong", intent) : refusedRedirect("newPassword", intent, passwordRefusalQuery(refused));
}

export function enrolmentRefusedRedirect(intent: string, refused: EnrolmentRefusal): Response {
  return refusedRedirect(refused, intent);
}

/** A refused display name: the one name rule's reason (and, for one too long, the limit and its length, never the name). */
export function nameRefusedRedirect(refusal: NameRefusal): Response {
  if (refusal.reason === "too-long") return refusedRedirect("nameTooLong", "update-profile", { [NAME_MAX_PARAM]: String(refusal.max), [NAME_LENGTH_PARAM]: String(refusal.length) });
  return refusedRedirect(refusal.reason === "empty" ? "nameEmpty" : "nameNotText", "update-profile");
}

/**
 * The refusal the page's address names, shaped as the action's answer would be (the section reads
 * one or the other), with its words in the section's notice; null when none or not one of ours.
 */
export async function refusalFromQuery(
  ar: AuthRequest,
  user: { id: string; email: string | null; name: string | null },
  page: { passwordFloor: number; deleteWord: string },
): Promise<{ section: AccountSection; field: string; message: string; intent: string; totpSetup: TotpSetup | null } | null> {
  const params = ar.url.searchParams;
  const kind = params.get(REFUSED_PARAM);
  const intent = params.get(INTENT_PARAM) ?? "";
  if (!kind || !Object.hasOwn(REFUSALS, kind)) return null;
  const refusal = REFUSALS[kind as AccountRefusal];
  if (!(refusal.intents as readonly string[]).includes(intent)) return null;
  const words: Words = refusal.words;
  const message = typeof words === "string" ? t(words) : words({ ...page, params });
  if (message === null) return null;
  // A wrong first code: the set-up still pending is shown again for the next try. None pending
  // (turned on since, Back to this address): the refusal is over, nothing to say.
  const totpSetup = kind === "setupCodeWrong" ? await pendingTotpSetup(ar, user) : null;
  if (kind === "setupCodeWrong" && !totpSetup) return null;
  return { section: refusal.section, field: refusal.field, message, intent, totpSetup };
}
