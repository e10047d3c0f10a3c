// GET /auth/verify-request: "Check your email", and in the browser
// that asked — the one holding the authjs.email-code cookie — the form for the e-mailed code:
// POST /auth/callback/email (type=email, type=signup) or POST /auth/reset-password with a new
// password (type=reset).
import { toRelative, validateCallbackUrl } from "../core/callback-url.server";
import { ensureCsrfToken } from "../core/csrf.server";
import { headersWith } from "../core/page-session.server";
import { authRequest } from "../core/request.server";
import { pendingRequestAddress, readEmailCodeCookie } from "../email/email-code.server";
import { getSession } from "../core/session.server";
import { EMAIL_PROVIDER_ID } from "../email/strategy.server";
import type { AuthRequest } from "../core/request.server";
import { t } from "../../i18n/t.server";
import { passwordRefusalFromQuery, passwordRefusalQuery } from "../credentials/password-policy.server";
import type { PasswordRefusal } from "../core/errors";

export type VerifyRequestType = "email" | "signup" | "reset";

export type CodeForm = {
  action: string;
  csrfToken: string;
  /** Where a right code lands (sign-in and sign-up); the reset form lands on /account. */
  callbackUrl: string | null;
  /** The reset form also asks for the new password. */
  withPassword: boolean;
  minLength: number;
};

export function verifyRequestType(value: string | null): VerifyRequestType {
  return value === "signup" || value === "reset" ? value : "email";
}

/**
 * "Send it again": the form that asked, posted again with the same address — the same endpoint,
 * so the same limits and the same answer whether or not the address has an account.
 */
export type ResendForm = { action: string; csrfToken: string; email: string; callbackUrl: string | null };

/** The code form for this browser, when it holds a code cookie for a request of this page's type. */
export async function codeFormFor(
  request: Request,
  type: VerifyRequestType,
): Promise<{ form: CodeForm | null; address: string | null; resend: ResendForm | null; sentAgain: boolean; setCookies: (string | null)[] }> {
  const ar = authRequest(request);
  if (!ar.config.emailCode) return { form: null, address: null, resend: null, sentAgain: false, setCookies: [] };
  // The form follows what the cookie names, not the page's type parameter: a sign-up for an address
  // that has an account sends a sign-in e-mail, and the page must look the same for both kinds of
  // address whatever its type says. Sign-in and sign-up codes are typed in
  // the same form; a reset code goes with a new password.
  const reset = type === "reset";
  const mine = (await readEmailCodeCookie(ar)).filter((p) => p.purpose !== "reauth" && (p.purpose === "reset") === reset);
  const pending = mine[0];
  if (!pending) return { form: null, address: null, resend: null, sentAgain: false, setCookies: [] };
  // A request used (in another tab, by its link), ended or expired: nothing to type a code for.
  const address = await pendingRequestAddress(pending);
  if (address === null) return { form: null, address: null, resend: null, sentAgain: false, setCookies: [] };
  const csrf = ensureCsrfToken(ar);
  const callbackUrl = pending.callbackUrl ? validateCallbackUrl(pending.callbackUrl, ar.origin) : null;
  // A sign-up's e-mail carries the chosen password with it: asking again means the sign-up form.
  const resendAction = type === "reset" ? `${ar.config.basePath}/forgot-password` : type === "email" ? `${ar.config.basePath}/signin/${EMAIL_PROVIDER_ID}` : null;
  return {
    address,
    // "Send it again" was pressed (this browser asked more than once, same address): say it went.
    sentAgain: mine.length > 1 && (await pendingRequestAddress(mine[1]!)) === address,
    resend: resendAction
      ? { action: resendAction, csrfToken: csrf.token, email: address, callbackUrl: type === "reset" ? null : toRelative(callbackUrl ?? `${ar.origin}/`) }
      : null,
    form: {
      action: type === "reset" ? `${ar.config.basePath}/reset-password` : `${ar.config.basePath}/callback/${EMAIL_PROVIDER_ID}`,
      csrfToken: csrf.token,
      callbackUrl: type === "reset" ? null : toRelative(callbackUrl ?? `${ar.origin}/`),
      withPassword: type === "reset",
      // The site's floor: before the code is proved the page knows no account (ADR 103).
      minLength: ar.config.passwordMinLength,
    },
    setCookies: [csrf.setCookie],
  };
}

/**
 * A refused e-mailed code (sign-in or sign-up) answers with a redirect to this page
 * (Post/Redirect/Get), the refusal in the query: `refused` (no code typed, or a wrong one) and
 * `tries` (how many are left). Back, after the right code, then lands on a page, never on the
 * answer to a POST (Chromium's "Confirm form resubmission"). The query only picks the words; the
 * tries are counted on the server. No `type`: the page does not say whether it was a sign-in or a
 * sign-up, as the refusal never did (a sign-up for an address with an account is a sign-in).
 */
const REFUSED_PARAM = "refused";
const TRIES_PARAM = "tries";

export function codeRefusedUrl(ar: AuthRequest, triesLeft: number | null): string {
  const query = new URLSearchParams(codeRefusalQuery(triesLeft));
  return `${ar.origin}${ar.config.basePath}/verify-request?${query}`;
}

function codeRefusalQuery(triesLeft: number | null): Record<string, string> {
  return triesLeft === null ? { [REFUSED_PARAM]: "required" } : { [REFUSED_PARAM]: "wrong", [TRIES_PARAM]: String(triesLeft) };
}

/**
 * A refused reset by code (POST /auth/reset-password from this page) comes back here the same way:
 * the code (none, or wrong with the tries left), or — the code proved — the new password, by its
 * reason and the proved account's shortest length. Nothing typed is in the URL.
 */
export type ResetRefusal = { code: true; triesLeft: number | null } | { code: false; reason: PasswordRefusal; min: number };

export function resetRefusedUrl(ar: AuthRequest, refusal: ResetRefusal): string {
  const why = refusal.code ? codeRefusalQuery(refusal.triesLeft) : { [REFUSED_PARAM]: "password", ...passwordRefusalQuery(refusal.reason, refusal.min) };
  return `${ar.origin}${ar.config.basePath}/verify-request?${new URLSearchParams({ provider: "email", type: "reset", ...why })}`;
}

function resetPasswordRefusal(params: URLSearchParams, floor: number): { message: string; min: number } | null {
  return params.get(REFUSED_PARAM) === "password" ? passwordRefusalFromQuery(params, floor) : null;
}

function codeRefusalText(params: URLSearchParams): string | null {
  const refused = params.get(REFUSED_PARAM);
  if (refused === "required") return t("emailCode.required");
  if (refused !== "wrong") return null;
  const tries = Number(params.get(TRIES_PARAM));
  return t("emailCode.wrong", { triesLeft: Number.isSafeInteger(tries) && tries >= 0 && tries <= 100 ? tries : 0 });
}

export async function verifyRequestPageData(request: Request) {
  const ar = authRequest(request);
  const type = verifyRequestType(ar.url.searchParams.get("type"));
  const { form, address, resend, sentAgain, setCookies } = await codeFormFor(request, type);
  // Shown only beside the form it is about (a request used or ended since has none).
  const codeError = form ? codeRefusalText(ar.url.searchParams) : null;
  const passwordRefused = form && type === "reset" ? resetPasswordRefusal(ar.url.searchParams, form.minLength) : null;
  // The refused password's own floor (the proved account's), so the field asks for what was said.
  if (form && passwordRefused) form.minLength = passwordRefused.min;
  // Back to this page once the sign-in it waited for is done (the link used in another tab, the
  // code typed): a signed-in visitor with nothing left to wait for reads that, with the way on —
  // never "check your e-mail" beside the header of a signed-in page.
  const { session } = type === "reset" || form ? { session: null } : await getSession(ar, { roll: false });
  const signedInAs = session ? (session.data.user.email ?? session.data.user.name ?? "") : null;
  return {
    data: {
      type,
      address,
      resend,
      sentAgain,
      signedInAs,
      linkMaxAge: type === "reset" ? ar.config.passwordResetLinkMaxAge : ar.config.emailTokenMaxAge,
      codeMaxAge: ar.config.emailCodeMaxAge,
      codeForm: form,
      codeError,
      passwordError: passwordRefused?.message ?? null,
    },
    headers: headersWith(setCookies),
  };
}
