// Sign-up with a verified address (docs/decisions/046-signup-on-existing-addresses.md).
//
//   GET  /auth/signup   email, password, optional name, hidden callbackUrl and csrfToken
//   POST /auth/signup   address and policy first (a refusal is the same 400 for every address), then
//                       the same work for every address — the send limits counted, the password
//                       hashed, a request stored and sealed, one e-mail sent — and one answer: 302 to
//                       /auth/verify-request?provider=email&type=signup with the code cookie.
//     new address       the e-mail has a sign-up link and code; the row keeps the password's HASH and
//                       the name; the user exists only once the link or code is used (email/strategy).
//     known address     the e-mail says there is an account, with a sign-in link and code (exactly a
//                       sign-in e-mail's request) and a link to the forgotten-password page; the hash
//                       of the password typed is dropped, the account is never touched.
import { signUpMessage, accountExistsMessage } from "../../mail/templates.server";
import { db } from "../../db/client.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { resolveCallbackUrl } from "../core/callback-url.server";
import { normalizeEmailAddress } from "../core/email-address";
import { ssoRequiredForAddress } from "../organizations/policy.server";
import { AuthError } from "../core/errors";
import { limitMessage } from "../core/messages.server";
import { countEmailSend } from "../core/limits.server";
import { clientAddress, authRequest } from "../core/request.server";
import { badRequest, errorRedirect, redirectResponse } from "../core/respond.server";
import { ensureCsrfToken } from "../core/csrf.server";
import { hashPassword } from "../credentials/password.server";
import { checkPassword } from "../credentials/password-policy.server";
import { sendLinkEmail } from "../email/send.server";
import { signInLink } from "../email/strategy.server";
import { passwordPagesOffered } from "../signin/registry.server";
import { FORM_EXPIRED, formAnswerFor, readName, readPost, relativeCallback, typed, UNREADABLE, type Answer } from "./forms.server";
import { t } from "../../i18n/t.server";

export type SignupValues = { email: string; name: string; callbackUrl: string; minLength: number };

/** GET /auth/signup: the form, or null when sign-up is off (the route answers as for an unknown action). */
export function signupPageData(request: Request) {
  const ar = authRequest(request);
  if (!passwordPagesOffered(ar.config).signup) return null;
  const csrf = ensureCsrfToken(ar);
  const callback = resolveCallbackUrl(ar);
  return {
    csrfToken: csrf.token,
    setCookies: [csrf.setCookie, callback.setCookie].filter((c): c is string => Boolean(c)),
    values: { email: "", name: "", callbackUrl: relativeCallback(callback.url), minLength: ar.config.passwordMinLength } satisfies SignupValues,
  };
}

export async function signupAction(request: Request): Promise<Answer<SignupValues>> {
  const read = await readPost(request);
  const ar = read.ar;
  if (!passwordPagesOffered(ar.config).signup) return { kind: "response", response: badRequest() };
  const form = formAnswerFor<SignupValues>(read);
  const minLength = ar.config.passwordMinLength;
  if ("refused" in read) return form(400, { formError: UNREADABLE(), fieldErrors: {} }, { email: "", name: "", callbackUrl: "/", minLength });
  const { body, json } = read;
  const callback = resolveCallbackUrl(ar, body);
  const values: SignupValues = { email: typed(body.email), name: typed(body.name, 400), callbackUrl: relativeCallback(callback.url), minLength };
  if (!read.csrfOk) return form(403, { formError: FORM_EXPIRED(), fieldErrors: {} }, values);

  // The address and the policy first: the same refusal whether or not the address has an account.
  const address = normalizeEmailAddress(body.email);
  if (!address.ok) return form(400, { formError: null, fieldErrors: { email: t("address.invalid") } }, values);
  // An organization that requires its connection: its people arrive through it (ADR 165), by the
  // domain alone, so the answer is the same for every address of the domain.
  const ssoDomain = await ssoRequiredForAddress(address.address);
  if (ssoDomain) return { kind: "response", response: errorRedirect(ar, "SsoRequired", { json, extra: { domain: ssoDomain } }) };
  const name = readName(body.name);
  if (!name.ok) return form(400, { formError: null, fieldErrors: { name: name.message } }, values);
  const policy = await checkPassword(body.password, { email: address.address, name: name.name }, ar.config);
  if (!policy.ok) return form(400, { formError: null, fieldErrors: { password: policy.message } }, values);

  // From here every address does the same work: count, hash, store and seal, send one e-mail.
  const refused = await countEmailSend(ar.config.rateLimits, address.address, clientAddress(ar));
  if (refused) {
    await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: refused.limit } });
    return {
      ...form(429, { formError: limitMessage(refused), fieldErrors: {} }, values),
      retryAfterSeconds: refused.retryAfterSeconds,
    };
  }
  const passwordHash = await hashPassword(policy.password);
  const existing = await db().user.findUnique({ where: { email: address.address }, select: { id: true } });
  const host = new URL(ar.origin).host;
  const base = `${ar.origin}${ar.config.basePath}`;
  let setCookie: string | null;
  try {
    ({ setCookie } = existing
      ? await sendLinkEmail(ar, {
          address: address.address,
          purpose: "signin",
          maxAgeSeconds: ar.config.emailTokenMaxAge,
          link: (token) => signInLink(ar, token, address.address, callback.url),
          message: (url, code) =>
            accountExistsMessage({
              to: address.address,
              url,
              host,
              maxAgeSeconds: ar.config.emailTokenMaxAge,
              code,
              forgotPasswordUrl: passwordPagesOffered(ar.config).forgotPassword ? `${base}/forgot-password` : null,
            }),
          callbackUrl: callback.url,
          bindBrowser: true,
        })
      : await sendLinkEmail(ar, {
          address: address.address,
          purpose: "signup",
          maxAgeSeconds: ar.config.emailTokenMaxAge,
          link: (token) => signInLink(ar, token, address.address, callback.url),
          message: (url, code) => signUpMessage({ to: address.address, url, host, maxAgeSeconds: ar.config.emailTokenMaxAge, code }),
          callbackUrl: callback.url,
          pending: { passwordHash, name: name.name },
          // The browser that signed up finishes with its link without typing the password again,
          // codes on or off; another browser proves a password (ADR 061).
          bindBrowser: true,
        }));
  } catch (error) {
    if (error instanceof AuthError) return { kind: "response", response: errorRedirect(ar, error.code, { json }) };
    throw error;
  }
  // The same event for both: the trail says a sign-up e-mail went out, not which kind.
  await recordEvent("email-sent", { ...eventSource(ar), detail: { purpose: "signup" } });
  const next = `${base}/verify-request?${new URLSearchParams({ provider: "email", type: "signup" })}`;
  return { kind: "response", response: redirectResponse(next, { json, setCookies: [callback.setCookie, setCookie] }) };
}
