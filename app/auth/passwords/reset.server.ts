// Forgotten password.
//
//   GET  /auth/forgot-password   a form with the address
//   POST /auth/forgot-password   always 302 to /auth/verify-request?provider=email&type=reset, with the
//                                code cookie, for every address: the limits counted, a request stored
//                                and sealed; only an existing user's request is mailed (after the
//                                answer, so that the answer takes the same time either way).
//   GET  /auth/reset-password    ?token&email: the new-password form for a live link (not used up)
//   POST /auth/reset-password    token + email + password, or code + password from the asking
//                                browser. Prove, then judge (ADR 103): the code or link first, the
//                                password after, against the proved account's rules. A refusal
//                                redirects back to the form's page (the code form, or the link's),
//                                which says why (JSON clients: a 400). A refused password uses up
//                                no link, and costs one of a code's five tries (the try its proof
//                                took). Success sets the password, ends every session of the user
//                                on every instance, signs this browser in and lands on /account.
import { resetPasswordMessage } from "../../mail/templates.server";
import { db } from "../../db/client.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { actorEventFields, type Actor } from "../accounts/actor";
import { resolveUser, type UserKey } from "../accounts/admin.server";
import { toSessionUser } from "../accounts/users.server";
import { normalizeEmailAddress } from "../core/email-address";
import { ssoRequiredForAddress } from "../organizations/policy.server";
import { limitMessage } from "../core/messages.server";
import { countEmailSend } from "../core/limits.server";
import { authRequest, clientAddress, type AuthRequest } from "../core/request.server";
import { badRequest, errorRedirect, redirectResponse } from "../core/respond.server";
import { ensureCsrfToken } from "../core/csrf.server";
import { hashPassword } from "../credentials/password.server";
import { checkPassword, minimumLength, passwordRefusalFromQuery, passwordRefusalQuery, singleFactorFloorMet, type PasswordOwner, type PolicyResult } from "../credentials/password-policy.server";
import type { PasswordRefusal } from "../core/errors";
import { resetRefusedUrl, type ResetRefusal } from "../signin/verify-request-page.server";
import type { AuthConfig } from "../core/config.server";
import { secondFactorEnabled } from "../two-factor/store.server";
import { clearEmailCodeCookie, proveEmailCode, typedCode } from "../email/email-code.server";
import { sendLinkEmail } from "../email/send.server";
import { consumeTokenRow, isWellFormedToken, peekToken } from "../email/verification-token.server";
import { completeSignIn } from "../signin/flow.server";
import { passwordPagesOffered } from "../signin/registry.server";
import { FORM_EXPIRED, formAnswerFor, readPost, typed, UNREADABLE, type Answer } from "./forms.server";
import { t } from "../../i18n/t.server";
import { KEPT_ADDRESS_MAX_AGE, keepAddressCookie, takeKeptAddress } from "../signin/kept-address.server";

export type ForgotValues = { email: string };

/**
 * A refusal a redirect back to the form's page names (Post/Redirect/Get): `?refused=address` on the
 * forgotten-password page, `?refused=password` (with its `reason`) on the link's new-password page.
 */
const REFUSED_PARAM = "refused";

export function forgotPasswordPageData(request: Request) {
  const ar = authRequest(request);
  if (!passwordPagesOffered(ar.config).forgotPassword) return null;
  const csrf = ensureCsrfToken(ar);
  // A refused address comes back here (Post/Redirect/Get) with `?refused=address`; what was typed
  // rides in the kept-address cookie (read once), never in the URL.
  const refused = ar.url.searchParams.get(REFUSED_PARAM) === "address";
  const kept = refused ? takeKeptAddress(ar) : { address: null, setCookie: null };
  const email = kept.address ?? ar.url.searchParams.get("email");
  return {
    csrfToken: csrf.token,
    setCookies: [csrf.setCookie, kept.setCookie].filter((c): c is string => c !== null),
    values: { email: typed(email) } satisfies ForgotValues,
    fieldErrors: (refused ? { email: t("address.invalid") } : {}) as Record<string, string>,
  };
}

export async function forgotPasswordAction(request: Request): Promise<Answer<ForgotValues>> {
  const read = await readPost(request);
  const ar = read.ar;
  if (!passwordPagesOffered(ar.config).forgotPassword) return { kind: "response", response: badRequest() };
  const form = formAnswerFor<ForgotValues>(read);
  if ("refused" in read) return form(400, { formError: UNREADABLE(), fieldErrors: {} }, { email: "" });
  const { body, json } = read;
  const values = { email: typed(body.email) };
  // "Forgot your password?" on the sign-in page: the form, with the address just typed there
  // carried in the POST (never in a URL a log would keep). Nothing is sent or checked yet.
  if (body.intent === "start") return form(200, { formError: null, fieldErrors: {} }, values);
  if (!read.csrfOk) return form(403, { formError: FORM_EXPIRED(), fieldErrors: {} }, values);
  const address = normalizeEmailAddress(body.email);
  if (!address.ok) {
    const refused = form(400, { formError: null, fieldErrors: { email: t("address.invalid") } }, values);
    if (json) return refused;
    // A browser: back to the form (a redirect, so Back after the next try never lands on this
    // POST's answer), the address as typed kept the way the sign-in page keeps it.
    const keep = values.email.trim() === "" ? [] : [keepAddressCookie(ar, values.email, KEPT_ADDRESS_MAX_AGE)];
    const again = `${ar.origin}${ar.config.basePath}/forgot-password?${new URLSearchParams({ [REFUSED_PARAM]: "address" })}`;
    return { ...refused, again: redirectResponse(again, { setCookies: [...read.setCookies, ...keep] }) };
  }

  // An organization that requires its connection resets no password on its domain (by the domain
  // alone, ADR 165): the sign-in page names its sign-in instead.
  const ssoDomain = await ssoRequiredForAddress(address.address);
  if (ssoDomain) return { kind: "response", response: errorRedirect(ar, "SsoRequired", { json, extra: { domain: ssoDomain } }) };
  const refused = await countEmailSend(ar.config.rateLimits, address.address, clientAddress(ar));
  if (refused) {
    await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: refused.limit } });
    return {
      ...form(429, { formError: limitMessage(refused), fieldErrors: {} }, values),
      retryAfterSeconds: refused.retryAfterSeconds,
    };
  }
  const user = await db().user.findUnique({ where: { email: address.address }, select: { id: true } });
  const host = new URL(ar.origin).host;
  // Both kinds of address: a request stored and sealed in the cookie. Only a user's is mailed, and
  // after the answer, so neither the answer nor its time says which it was.
  const { setCookie } = await sendLinkEmail(ar, {
    address: address.address,
    purpose: "reset",
    maxAgeSeconds: ar.config.passwordResetLinkMaxAge,
    link: (token) => `${ar.origin}${ar.config.basePath}/reset-password?${new URLSearchParams({ token, email: address.address })}`,
    message: (url, code) => resetPasswordMessage({ to: address.address, url, host, maxAgeSeconds: ar.config.passwordResetLinkMaxAge, code }),
    deliver: user ? "background" : "never",
  });
  await recordEvent("email-sent", { userId: user?.id ?? null, ...eventSource(ar), detail: { purpose: "reset" } });
  const next = `${ar.origin}${ar.config.basePath}/verify-request?${new URLSearchParams({ provider: "email", type: "reset" })}`;
  return { kind: "response", response: redirectResponse(next, { json, setCookies: [setCookie] }) };
}

export type OperatorResetResult = { ok: true; userId: string; email: string } | { ok: false; reason: "not-found" | "no-address" | "not-sent" };

/**
 * An operator (`npm run user:reset`, the /admin action) has the user sent the same reset e-mail
 * the forgotten-password form sends: the user chooses the new password; the operator never sets
 * or sees one. Sent now, so the operator learns at once when it could not be.
 */
export async function sendPasswordResetFor(ar: AuthRequest, who: UserKey, actor: Actor): Promise<OperatorResetResult> {
  const user = await resolveUser(who);
  if (!user) return { ok: false, reason: "not-found" };
  if (!user.email) return { ok: false, reason: "no-address" };
  const address = user.email;
  const host = new URL(ar.origin).host;
  try {
    await sendLinkEmail(ar, {
      address,
      purpose: "reset",
      maxAgeSeconds: ar.config.passwordResetLinkMaxAge,
      link: (token) => `${ar.origin}${ar.config.basePath}/reset-password?${new URLSearchParams({ token, email: address })}`,
      message: (url, code) => resetPasswordMessage({ to: address, url, host, maxAgeSeconds: ar.config.passwordResetLinkMaxAge, code }),
      deliver: "now",
    });
  } catch {
    // sendLinkEmail logged the cause and removed the request.
    return { ok: false, reason: "not-sent" };
  }
  await recordEvent("email-sent", actorEventFields(actor, user.id, { purpose: "reset" }));
  return { ok: true, userId: user.id, email: address };
}

export type ResetValues = {
  /** The link's token and address (hidden fields), or null for the code form. */
  token: string | null;
  email: string | null;
  minLength: number;
  /** The code form (from the asking browser) rather than the link's form. */
  byCode: boolean;
};

/** The error page calls a dead reset link a password-reset link, with the way to ask for a new one. */
const RESET_LINK = { link: "reset" };

/** GET /auth/reset-password: the form for a live link, without using it; otherwise Verification. */
export async function resetPasswordPageData(
  request: Request,
): Promise<{ kind: "response"; response: Response } | { kind: "page"; csrfToken: string; setCookies: string[]; values: ResetValues; passwordError: string | null }> {
  const ar = authRequest(request);
  if (!passwordPagesOffered(ar.config).forgotPassword) return { kind: "response", response: badRequest() };
  const token = ar.url.searchParams.get("token");
  const address = normalizeEmailAddress(ar.url.searchParams.get("email"));
  const live = address.ok && isWellFormedToken(token) && (await peekToken({ identifier: address.address, token, purpose: "reset", secrets: ar.config.secrets })) !== null;
  if (!live || !address.ok || token === null) return { kind: "response", response: errorRedirect(ar, "Verification", { extra: RESET_LINK }) };
  const csrf = ensureCsrfToken(ar);
  // The link is proved: the account's own floor, the one /account shows (8 with the second factor on).
  const minLength = minimumLength(await passwordOwner(address.address), ar.config);
  const refused = ar.url.searchParams.get(REFUSED_PARAM) === "password" ? passwordRefusalFromQuery(ar.url.searchParams, minLength) : null;
  return {
    kind: "page",
    csrfToken: csrf.token,
    setCookies: csrf.setCookie ? [csrf.setCookie] : [],
    values: { token, email: address.address, minLength, byCode: false },
    passwordError: refused?.message ?? null,
  };
}

/**
 * Whose password a reset chooses: the account's name and whether its second factor is on (then 8
 * characters are enough, ADR 075). An address without an account gets the single-factor rules.
 */
async function passwordOwner(address: string): Promise<PasswordOwner> {
  const user = await db().user.findUnique({ where: { email: address }, select: { id: true, name: true } });
  return { email: address, name: user?.name ?? null, secondFactor: user ? await secondFactorEnabled(user.id) : false };
}

export async function resetPasswordAction(request: Request): Promise<Answer<ResetValues>> {
  const read = await readPost(request);
  const ar = read.ar;
  if (!passwordPagesOffered(ar.config).forgotPassword) return { kind: "response", response: badRequest() };
  // Until the code or link is proved, the site's floor: the same for every address (ADR 103).
  const minLength = ar.config.passwordMinLength;
  const form = formAnswerFor<ResetValues>(read);
  if ("refused" in read) return form(400, { formError: UNREADABLE(), fieldErrors: {} }, { token: null, email: null, minLength, byCode: true });
  const { body, json } = read;
  const verification = (setCookies: string[] = []): Answer<ResetValues> => ({ kind: "response", response: errorRedirect(ar, "Verification", { json, setCookies, extra: RESET_LINK }) });
  const byCode = body.token === undefined;
  const values: ResetValues = byCode
    ? { token: null, email: null, minLength, byCode: true }
    : { token: typed(body.token, 64), email: typed(body.email), minLength, byCode: false };
  if (!read.csrfOk) return form(403, { formError: FORM_EXPIRED(), fieldErrors: {} }, values);

  // Prove, then judge (ADR 103): the code or the link first. Before it is proved nothing that
  // depends on the account is read or said — not whether it exists, its name, nor its floor.
  if (byCode) {
    const code = typedCode(body.code);
    if (code === null) return { ...form(400, { formError: null, fieldErrors: { code: t("emailCode.required") } }, values), ...codeAgain(ar, read, { code: true, triesLeft: null }) };
    const attempt = await proveEmailCode(ar, code, ["reset"]);
    if (attempt.result === "wrong") return { ...form(400, { formError: null, fieldErrors: { code: attempt.message } }, values), ...codeAgain(ar, read, { code: true, triesLeft: attempt.triesLeft }) };
    if (attempt.result === "limited") {
      await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: attempt.refusal.limit } });
      const retryAfterSeconds = attempt.refusal.retryAfterSeconds;
      return { ...form(429, { formError: limitMessage(attempt.refusal), fieldErrors: {} }, values), retryAfterSeconds };
    }
    if (attempt.result === "ended") return verification([clearEmailCodeCookie(ar)]);
    const address = attempt.request.identifier;
    const judged = await judgePassword(body.password, address, ar.config);
    if (!judged.ok) {
      // The try the proof took stays counted: a refused password is one of the code's five.
      if (!(await attempt.refuse())) return verification([clearEmailCodeCookie(ar)]);
      const refused = form(400, { formError: null, fieldErrors: { password: judged.message } }, { ...values, minLength: judged.minLength });
      return { ...refused, ...codeAgain(ar, read, { code: false, reason: judged.reason, min: judged.minLength }) };
    }
    if (!(await attempt.use())) return verification();
    return { kind: "response", response: await setNewPassword(ar, address, judged.password, json) };
  }

  const check = normalizeEmailAddress(body.email);
  if (!check.ok || !(await peekToken({ identifier: check.address, token: body.token, purpose: "reset", secrets: ar.config.secrets }))) return verification();
  const address = check.address;
  // A refused password uses nothing up: the link is a secret of 256 bits, not a guess to count.
  const judged = await judgePassword(body.password, address, ar.config);
  if (!judged.ok) {
    // Back to the link's own page (its token was in that URL already): the loader reads the
    // account's floor again, so only the reason is named.
    const link = `${ar.origin}${ar.config.basePath}/reset-password?${new URLSearchParams({ token: values.token ?? "", email: address, [REFUSED_PARAM]: "password", ...passwordRefusalQuery(judged.reason) })}`;
    const again = json ? {} : { again: redirectResponse(link, { setCookies: read.setCookies }) };
    return { ...form(400, { formError: null, fieldErrors: { password: judged.message } }, { ...values, minLength: judged.minLength }), ...again };
  }
  if (!(await consumeTokenRow({ identifier: address, token: body.token, purposes: ["reset"], secrets: ar.config.secrets }))) return verification();
  return { kind: "response", response: await setNewPassword(ar, address, judged.password, json) };
}

/** The new password against the proved account's own rules, with the floor its form shows. */
async function judgePassword(password: unknown, address: string, config: AuthConfig): Promise<(PolicyResult & { ok: true }) | { ok: false; reason: PasswordRefusal; message: string; minLength: number }> {
  const owner = await passwordOwner(address);
  const policy = await checkPassword(password, owner, config);
  return policy.ok ? policy : { ok: false, reason: policy.reason, message: policy.message, minLength: minimumLength(owner, config) };
}

/** A refused reset by code, for a browser: back to the code form (/auth/verify-request), which says why. JSON clients: the form answer alone. */
function codeAgain(ar: AuthRequest, read: { setCookies: string[]; json: boolean }, refusal: ResetRefusal): { again?: Response } {
  return read.json ? {} : { again: redirectResponse(resetRefusedUrl(ar, refusal), { setCookies: read.setCookies }) };
}



/**
 * Sets the password, ends every pending link and code and every session of the user, and signs
 * this browser in with a new one. A user with the second factor on gives it first: nothing is
 * written until then (completeSignIn carries the new hash sealed in the pending sign-in, ADR 062).
 */
async function setNewPassword(ar: AuthRequest, address: string, password: string, json: boolean): Promise<Response> {
  const hash = await hashPassword(password);
  const user = await db().user.findUnique({ where: { email: address } });
  if (!user) return errorRedirect(ar, "Verification", { json, extra: RESET_LINK });
  const setCookies = ar.cookies.has(ar.names.emailCode) ? [clearEmailCodeCookie(ar)] : [];
  return completeSignIn(
    // The account page says what happened, as after every other change.
    { ar, json, callbackUrl: `${ar.origin}/account?updated=password-reset`, setCookies, providerType: "email" },
    "credentials",
    { user: toSessionUser(user), isNewUser: false },
    { passwordHash: hash, floorMet: singleFactorFloorMet(password, ar.config), address },
  );
}
