// The texts of the error codes  in the language of the request being served
// (app/i18n/t.server.ts): the sign-in page's `?error=` message, the error page, and the
// RateLimited sentences that other forms reuse.
import { t, type MessageKey } from "../../i18n/t.server";
import type { NameRefusal } from "./display-text";
import { ERROR_PAGES, parseRetryMinutes, SIGNIN_ERROR_MESSAGES, SIGNIN_NOTICE_MESSAGES, type ErrorPageCode, type SigninNoticeCode } from "./errors";
import { LIMIT_KIND, LIMIT_KINDS, retryAfterMinutes, type LimitKind, type LimitName, type LimitRefusal } from "./limit-table";

/** Why a typed name is refused (display-text.ts's one rule); `empty`: the form's own sentence for none. */
export function nameRefusalMessage(refusal: NameRefusal, empty: MessageKey, translate: (key: MessageKey, values?: Record<string, string | number>) => string = t): string {
  if (refusal.reason === "too-long") return translate("name.tooLong", { max: refusal.max, length: refusal.length });
  return translate(refusal.reason === "empty" ? empty : "name.notText");
}

/**
 * One sentence per kind of limit (ADR 111): what happened, in words that reveal nothing about the
 * account, and the wait. Only "own" says "too many attempts".
 */
const LIMIT_MESSAGES: Record<LimitKind, MessageKey> = {
  own: "error.RateLimited",
  account: "limit.account",
  address: "limit.address",
  network: "limit.network",
};

/** The `limit` query parameter of a RateLimited redirect: the kind, when it is one. */
export function parseLimitKind(value: string | null | undefined): LimitKind {
  return (LIMIT_KINDS as readonly string[]).includes(value ?? "") ? (value as LimitKind) : "own";
}

/** RateLimited's text for a kind of limit; `minutes` from the limit that refused (the `minutes` query parameter). */
export function rateLimitedMessage(minutes: number, kind: LimitKind = "own"): string {
  return t(LIMIT_MESSAGES[kind], { minutes });
}

/** The text of a refusal by `refusal`'s limit, with its wait. */
export function limitMessage(refusal: LimitRefusal): string {
  return rateLimitedMessage(retryAfterMinutes(refusal.retryAfterSeconds), LIMIT_KIND[refusal.limit]);
}

/**
 * The query parameter of a RateLimited redirect that ended a sign-in's second step: the sign-in
 * page then adds how a recovery code stands in for the authenticator's code next time.
 */
export const SECOND_STEP_PARAM = "step";

/**
 * A refused password with few tries left (ADR 160): CredentialsSignin's `tries` query parameter,
 * set when the attempt's counters allow PASSWORD_TRIES_WARNING more or fewer; at none, also the
 * `minutes` and `limit` of the pause it ran into. A RateLimited that refused a password carries
 * `for=password`: the sign-in page then names the ways in that need no password.
 */
export const TRIES_PARAM = "tries";
export const LIMITED_FOR_PARAM = "for";
const PASSWORD_TRIES_WARNING = 2;

/** The query parameters that warn of the pause after a wrong password (none while it is far). */
export function passwordTriesParams(left: { tries: number; limit: LimitName | null; retryAfterSeconds: number }): Record<string, string> {
  if (left.tries > PASSWORD_TRIES_WARNING || left.limit === null) return {};
  if (left.tries > 0) return { [TRIES_PARAM]: String(left.tries) };
  const kind = LIMIT_KIND[left.limit];
  return { [TRIES_PARAM]: "0", minutes: String(retryAfterMinutes(left.retryAfterSeconds)), ...(kind !== "own" ? { limit: kind } : {}) };
}

/** The query parameters of a RateLimited that refused a password. */
export const PASSWORD_LIMITED_PARAMS = { [LIMITED_FOR_PARAM]: "password" } as const;

/**
 * The words added to a password refusal or pause for `params`: the tries left, or the pause now
 * begun and the ways in that need no password (`otherWays`: this site sends sign-in e-mails).
 */
export function passwordLimitWords(code: string, params: URLSearchParams, otherWays: boolean): string | null {
  const hint = otherWays ? t("limit.passwordOtherWays") : null;
  if (code === "RateLimited") return params.get(LIMITED_FOR_PARAM) === "password" ? hint : null;
  if (code !== "CredentialsSignin") return null;
  const tries = params.get(TRIES_PARAM);
  if (tries === "1" || tries === "2") return t("limit.passwordTriesLeft", { tries: Number(tries) });
  if (tries !== "0") return null;
  const minutes = parseRetryMinutes(params.get("minutes"));
  const paused = minutes === null ? t("limit.passwordPausedLater") : t("limit.passwordPaused", { minutes });
  return hint ? `${paused} ${hint}` : paused;
}

export function signinErrorMessage(code: string | null | undefined, params?: URLSearchParams): string | null {
  if (!code) return null;
  if (code === "RateLimited") {
    const minutes = parseRetryMinutes(params?.get("minutes"));
    const text = minutes === null ? t("error.RateLimitedLater") : rateLimitedMessage(minutes, parseLimitKind(params?.get("limit")));
    return params?.get(SECOND_STEP_PARAM) === "two-factor" ? `${text} ${t("limit.recoveryHint")}` : text;
  }
  return Object.hasOwn(SIGNIN_ERROR_MESSAGES, code) ? t(SIGNIN_ERROR_MESSAGES[code as keyof typeof SIGNIN_ERROR_MESSAGES]) : t("error.default");
}

/** The text of a sign-in page notice (`?notice=`), or null for none or an unknown code. */
export function signinNoticeMessage(code: string | null | undefined): string | null {
  return code && Object.hasOwn(SIGNIN_NOTICE_MESSAGES, code) ? t(SIGNIN_NOTICE_MESSAGES[code as SigninNoticeCode]) : null;
}

export type ErrorPage = { status: number; heading: string; message: string; detail: string | null };

/** The error page for `code`: an unknown one is the generic page, 200 (as Auth.js answers). */
export function errorPage(code: string | null | undefined): ErrorPage {
  if (!code || !Object.hasOwn(ERROR_PAGES, code)) {
    return { status: 200, heading: t("errorPage.default.heading"), message: t("errorPage.default.message"), detail: null };
  }
  const page = ERROR_PAGES[code as ErrorPageCode];
  return {
    status: page.status,
    heading: t(`${page.prefix}.heading`),
    message: t(`${page.prefix}.message`),
    detail: page.detail ? t(`${page.prefix}.detail` as `errorPage.${"Configuration" | "Verification" | "ServiceUnavailable"}.detail`) : null,
  };
}
