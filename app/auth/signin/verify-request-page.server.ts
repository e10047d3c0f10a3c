// GET /auth/verify-request (contract sections 3 and 15): "Check your email", and in the browser
// that asked — the one holding the authjs.email-code cookie — the form for the e-mailed code:
// POST /auth/callback/email (type=email, type=signup) or POST /auth/reset-password with a new
// password (type=reset).
import { toRelative, validateCallbackUrl } from "../core/callback-url.server";
import { PASSWORD_RESET_LINK_MAX_AGE } from "../core/config.server";
import { ensureCsrfToken } from "../core/csrf.server";
import { headersWith } from "../core/page-session.server";
import { authRequest } from "../core/request.server";
import { readEmailCodeCookie } from "../email/email-code.server";
import { EMAIL_PROVIDER_ID } from "../email/strategy.server";

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

const PURPOSE_OF: Record<VerifyRequestType, "signin" | "signup" | "reset"> = { email: "signin", signup: "signup", reset: "reset" };

export function verifyRequestType(value: string | null): VerifyRequestType {
  return value === "signup" || value === "reset" ? value : "email";
}

/** The code form for this browser, when it holds a code cookie for a request of this page's type. */
export async function codeFormFor(request: Request, type: VerifyRequestType): Promise<{ form: CodeForm | null; setCookies: (string | null)[] }> {
  const ar = authRequest(request);
  if (!ar.config.emailCode) return { form: null, setCookies: [] };
  const pending = await readEmailCodeCookie(ar);
  // A sign-up for an address that has an account sends a sign-in e-mail: its code is typed here too.
  const fits = pending && (pending.purpose === PURPOSE_OF[type] || (type === "signup" && pending.purpose === "signin"));
  if (!fits) return { form: null, setCookies: [] };
  const csrf = ensureCsrfToken(ar);
  const callbackUrl = pending.callbackUrl ? validateCallbackUrl(pending.callbackUrl, ar.origin) : null;
  return {
    form: {
      action: type === "reset" ? `${ar.config.basePath}/reset-password` : `${ar.config.basePath}/callback/${EMAIL_PROVIDER_ID}`,
      csrfToken: csrf.token,
      callbackUrl: type === "reset" ? null : toRelative(callbackUrl ?? `${ar.origin}/`),
      withPassword: type === "reset",
      minLength: ar.config.passwordMinLength,
    },
    setCookies: [csrf.setCookie],
  };
}

export async function verifyRequestPageData(request: Request) {
  const ar = authRequest(request);
  const type = verifyRequestType(ar.url.searchParams.get("type"));
  const { form, setCookies } = await codeFormFor(request, type);
  return {
    data: {
      type,
      linkMaxAge: type === "reset" ? PASSWORD_RESET_LINK_MAX_AGE : ar.config.emailTokenMaxAge,
      codeMaxAge: ar.config.emailCodeMaxAge,
      codeForm: form,
    },
    headers: headersWith(setCookies),
  };
}
