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
import { consumeTokenRow, peekToken } from "../email/verification-token.server";
import { browserAskedFor, codeRefusal } from "../email/email-code.server";
import { readBody, type Body } from "../core/body.server";
import { verifyCsrf } from "../core/csrf.server";
import { jsonResponse, wantsJsonRedirect } from "../core/respond.server";
import type { AuthRequest } from "../core/request.server";
import { hashPassword } from "../credentials/password.server";
import { checkPassword } from "../credentials/password-policy.server";
import { signInByEmail } from "../email/strategy.server";
import { completeSignIn, failureResponse } from "./flow.server";
import { codeFormFor, codeRefusedUrl, type CodeForm } from "./verify-request-page.server";
import { redirectResponse } from "../core/respond.server";

export type EmailConfirmPage = {
  address: string;
  token: string;
  callbackUrl: string;
  csrfToken: string;
  action: string;
};

/** A sign-up link opened in a browser that did not ask (ADR 061): choose the password here. */
export type ChoosePasswordPage = EmailConfirmPage & { name: string; minLength: number };

export type EmailCallbackOutcome =
  | { type: "confirm"; page: EmailConfirmPage; setCookies: string[] }
  | { type: "choose-password"; page: ChoosePasswordPage; setCookies: string[] }
  | { type: "response"; response: Response };

/** A refused password on the choose-password page: the page again, 400, with the text. */
export type ChoosePasswordRefusal = { type: "password-refused"; page: ChoosePasswordPage; message: string; response: Response };

/** The live sign-up request behind a link, when this browser did not ask for it (its code cookie does not name it). */
async function signupFromElsewhere(ar: AuthRequest, token: unknown, email: unknown) {
  const address = normalizeEmailAddress(email);
  if (!address.ok || typeof token !== "string") return null;
  const row = await peekToken({ identifier: address.address, token, purpose: "signup", secrets: ar.config.secrets });
  if (!row) return null;
  return { address: address.address, token, name: row.name ?? "", bound: await browserAskedFor(ar, row.requestId) };
}

function choosePasswordPage(ar: AuthRequest, found: { address: string; token: string; name: string }, callbackUrl: unknown) {
  const csrf = ensureCsrfToken(ar);
  const target = validateCallbackUrl(typeof callbackUrl === "string" ? callbackUrl : null, ar.origin) ?? `${ar.origin}/`;
  const page: ChoosePasswordPage = {
    address: found.address,
    token: found.token,
    name: found.name,
    callbackUrl: toRelative(target),
    csrfToken: csrf.token,
    action: `${ar.config.basePath}/callback/${EMAIL_PROVIDER_ID}`,
    minLength: ar.config.passwordMinLength,
  };
  return { page, setCookies: csrf.setCookie ? [csrf.setCookie] : [] };
}

/** A refused code: the form again, with the text and the tries left. */
export type EmailCodeRefusal = {
  type: "code-refused";
  /** The 400 JSON answer itself (what JSON-mode clients get, through the route's middleware). */
  response: Response;
  /** A browser's answer while the form lives: the check-your-e-mail page again, its refusal in the query. */
  again: Response | null;
  message: string;
  form: CodeForm | null;
};

export async function emailCallbackLoader(request: Request): Promise<EmailCallbackOutcome> {
  const ar = authRequest(request);
  if (findProvider(ar.config, EMAIL_PROVIDER_ID)) {
    const elsewhere = await signupFromElsewhere(ar, ar.url.searchParams.get("token"), ar.url.searchParams.get("email"));
    if (elsewhere && !elsewhere.bound) return { type: "choose-password", ...choosePasswordPage(ar, elsewhere, ar.url.searchParams.get("callbackUrl")) };
  }
  if (!ar.config.emailConfirm || !findProvider(ar.config, EMAIL_PROVIDER_ID)) {
    return { type: "response", response: await providerFlow(request, EMAIL_PROVIDER_ID, "callback") };
  }
  const token = ar.url.searchParams.get("token");
  const address = normalizeEmailAddress(ar.url.searchParams.get("email"));
  // A link that can no longer work says so now, not after the button is pressed. A sign-up link
  // reaching here was opened in the browser that asked (elsewhere it asked for a password above):
  // its button finishes the sign-up as the link itself would.
  const live = async (purpose: "signin" | "signup") =>
    address.ok && token !== null && (await peekToken({ identifier: address.address, token, purpose, secrets: ar.config.secrets })) !== null;
  const valid = (await live("signin")) || (await live("signup"));
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

/**
 * The choose-password form of a sign-up link (ADR 061): the address is proved by the link, the
 * account is created with the password chosen here, never the one typed at sign-up. A refused
 * password uses nothing up.
 */
async function finishSignupHere(ar: AuthRequest, body: Body, json: boolean): Promise<{ type: "response"; response: Response } | ChoosePasswordRefusal> {
  if (!verifyCsrf(ar, body.csrfToken)) return { type: "response", response: errorRedirect(ar, "MissingCSRF", { json }) };
  const found = await signupFromElsewhere(ar, body.token, body.email);
  if (!found) return { type: "response", response: errorRedirect(ar, "Verification", { json }) };
  const policy = await checkPassword(body.password, { email: found.address, name: found.name }, ar.config);
  if (!policy.ok) {
    const { page } = choosePasswordPage(ar, found, body.callbackUrl);
    const response = jsonResponse({ fieldErrors: { password: policy.message } }, { status: 400, noCache: true });
    return { type: "password-refused", page, message: policy.message, response };
  }
  const passwordHash = await hashPassword(policy.password);
  const used = await consumeTokenRow({ identifier: found.address, token: found.token, purposes: ["signup"], secrets: ar.config.secrets });
  if (!used) return { type: "response", response: errorRedirect(ar, "Verification", { json }) };
  const callbackUrl = validateCallbackUrl(typeof body.callbackUrl === "string" ? body.callbackUrl : null, ar.origin) ?? `${ar.origin}/`;
  try {
    const result = await signInByEmail({ email: found.address, request: ar.request, signUp: { passwordHash, name: used.name } });
    return { type: "response", response: await completeSignIn({ ar, json, callbackUrl, setCookies: [], providerType: "email" }, EMAIL_PROVIDER_ID, result) };
  } catch (error) {
    return { type: "response", response: failureResponse(ar, error, json) };
  }
}

export async function emailCallbackAction(request: Request): Promise<{ type: "response"; response: Response } | EmailCodeRefusal | ChoosePasswordRefusal> {
  const ar = authRequest(request);
  const body = await readBody(request).catch(() => null);
  // A sign-up link's form posts the token with a chosen password; a sign-up link posted from a
  // browser that did not ask (the confirm button) without one gets that form. Everything else is the flow's.
  if (body && body.token !== undefined && findProvider(ar.config, EMAIL_PROVIDER_ID)) {
    const found = await signupFromElsewhere(ar, body.token, body.email);
    if (found && (!found.bound || body.password !== undefined)) return finishSignupHere(ar, body, wantsJsonRedirect(request, body));
  }
  const response = await providerFlow(request, EMAIL_PROVIDER_ID, "callback");
  const refusal = codeRefusal(response);
  if (!refusal) return { type: "response", response };
  // The form comes back for the sign-in or sign-up request this browser's cookie names. Which of
  // the two it is stays out of the answer: a sign-up for an address with an account sends a
  // sign-in request, so naming it would tell an attacker who signed up an address that it has an
  // account. The form is the same for both.
  const { form } = await codeFormFor(request, "email");
  const again = form ? redirectResponse(codeRefusedUrl(ar, refusal.triesLeft), { setCookies: response.headers.getSetCookie() }) : null;
  return { type: "code-refused", response, again, message: refusal.message, form };
}

/** JSON-mode clients always get the flow's Response itself: `{url}`, or a refused code's 400 JSON. */
export async function emailCallbackJsonAction(request: Request): Promise<Response> {
  return (await emailCallbackAction(request)).response;
}
