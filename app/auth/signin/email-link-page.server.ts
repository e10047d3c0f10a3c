// GET|POST /auth/callback/email as a page route. Without AUTH_EMAIL_CONFIRM a GET uses the link
// at once (the Auth.js behaviour). With it, a GET only shows "Sign in as <address>" and a button
// that POSTs the link back with a CSRF token, so a mail scanner or link previewer that fetches
// the URL cannot use the link up; a person presses the button, with or without JavaScript.
import { toRelative, validateCallbackUrl } from "../core/callback-url.server";
import { ensureCsrfToken } from "../core/csrf.server";
import { normalizeEmailAddress } from "../core/email-address";
import { findProvider } from "./registry.server";
import { authRequest } from "../core/request.server";
import { errorRedirect } from "../core/respond.server";
import { providerFlow } from "./endpoint.server";
import { EMAIL_PROVIDER_ID } from "../email/strategy.server";
import { peekToken } from "../email/verification-token.server";
import { codeRefusal, readEmailCodeCookie } from "../email/email-code.server";
import { codeFormFor, type CodeForm, type VerifyRequestType } from "./verify-request-page.server";

export type EmailConfirmPage = {
  address: string;
  token: string;
  callbackUrl: string;
  csrfToken: string;
  action: string;
};

export type EmailCallbackOutcome =
  | { type: "confirm"; page: EmailConfirmPage; setCookies: string[] }
  | { type: "response"; response: Response };

/** A refused code (contract section 15): the form again, with the text and the tries left. */
export type EmailCodeRefusal = {
  type: "code-refused";
  /** The 400 JSON answer itself (what JSON-mode clients get, through the route's middleware). */
  response: Response;
  message: string;
  form: CodeForm | null;
  verifyType: VerifyRequestType;
};

export async function emailCallbackLoader(request: Request): Promise<EmailCallbackOutcome> {
  const ar = authRequest(request);
  if (!ar.config.emailConfirm || !findProvider(ar.config, EMAIL_PROVIDER_ID)) {
    return { type: "response", response: await providerFlow(request, EMAIL_PROVIDER_ID, "callback") };
  }
  const token = ar.url.searchParams.get("token");
  const address = normalizeEmailAddress(ar.url.searchParams.get("email"));
  // A link that can no longer work says so now, not after the button is pressed.
  const valid =
    address.ok &&
    token !== null &&
    (await peekToken({ identifier: address.address, token, purpose: "signin", secrets: ar.config.secrets })) !== null;
  if (!valid || !address.ok || token === null) return { type: "response", response: errorRedirect(ar, "Verification") };
  const csrf = ensureCsrfToken(ar);
  const callbackUrl = validateCallbackUrl(ar.url.searchParams.get("callbackUrl"), ar.origin) ?? `${ar.origin}/`;
  return {
    type: "confirm",
    page: {
      address: address.address,
      token,
      callbackUrl: toRelative(callbackUrl),
      csrfToken: csrf.token,
      action: `${ar.config.basePath}/callback/${EMAIL_PROVIDER_ID}`,
    },
    setCookies: csrf.setCookie ? [csrf.setCookie] : [],
  };
}

export async function emailCallbackAction(request: Request): Promise<{ type: "response"; response: Response } | EmailCodeRefusal> {
  const response = await providerFlow(request, EMAIL_PROVIDER_ID, "callback");
  const refusal = codeRefusal(response);
  if (!refusal) return { type: "response", response };
  // The form comes back for the request this browser's cookie names (sign-in or sign-up).
  const [pending] = (await readEmailCodeCookie(authRequest(request))).filter((p) => p.purpose !== "reset");
  const verifyType: VerifyRequestType = pending?.purpose === "signup" ? "signup" : "email";
  const { form } = await codeFormFor(request, verifyType);
  return { type: "code-refused", response, message: refusal.message, form, verifyType };
}

/** JSON-mode clients always get the flow's Response itself: `{url}`, or a refused code's 400 JSON. */
export async function emailCallbackJsonAction(request: Request): Promise<Response> {
  return (await emailCallbackAction(request)).response;
}
