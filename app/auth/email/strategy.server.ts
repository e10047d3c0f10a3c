// E-mail link sign-in (Auth.js's e-mail provider, reference §7).
//
//   POST /auth/signin/email     address → normalised → rate limits → token row → message sent
//                               → 302 /auth/verify-request, the same for every valid address
//   GET  /auth/callback/email   ?token&email&callbackUrl → token used up → user found or created
//   POST /auth/callback/email   the same from the "Sign in as …" page (AUTH_EMAIL_CONFIRM=true),
//                               which carries the CSRF token
//
// Not remix-auth-totp: it keeps the address in an unsigned cookie (docs/decisions/020).
import { Strategy } from "remix-auth/strategy";
import { db } from "../../db/client.server";
import { getMailer } from "../../mail/mailer.server";
import type { Mailer } from "../../mail/types";
import { signInMessage } from "../../mail/templates.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { readBody, type Body } from "../core/body.server";
import { resolveCallbackUrl } from "../core/callback-url.server";
import { getConfig, type AuthConfig } from "../core/config.server";
import { verifyCsrf } from "../core/csrf.server";
import { MAX_EMAIL_ADDRESS_LENGTH, normalizeEmailAddress } from "../core/email-address";
import { AuthError } from "../core/errors";
import { log } from "../core/log.server";
import type { FlowContext, Provider, SignInMethod } from "../signin/provider";
import { countEmailSend } from "../core/limits.server";
import { authRequest, clientAddress, type AuthRequest } from "../core/request.server";
import { errorRedirect, errorUrl, redirectResponse } from "../core/respond.server";
import { runStrategy } from "../signin/flow.server";
import { toSessionUser, type SignInResult } from "../accounts/users.server";
import { consumeTokenRow, peekToken, type UsedRequest } from "./verification-token.server";
import { attemptEmailCode, browserAskedFor, clearEmailCodeCookie, codeRefusedResponse, typedCode } from "./email-code.server";
import { sendLinkEmail } from "./send.server";
import { reauthenticateByEmail } from "./reauth-code.server";

export const EMAIL_PROVIDER_ID = "email";

/**
 * What the verify step is told: an address whose owner just proved they read its mail, and for a
 * sign-up  the pending password hash and name to create the account with.
 */
export type EmailVerifyOptions = { email: string; request: Request; signUp?: { passwordHash: string; name: string | null } | null };

export type EmailLinkStrategyOptions = {
  config: AuthConfig;
  mailer: Mailer;
  /** The provider id, which is also the last segment of its sign-in and callback paths. */
  providerId?: string;
};

export class EmailLinkStrategy extends Strategy<SignInResult, EmailVerifyOptions> {
  name = EMAIL_PROVIDER_ID;
  private readonly config: AuthConfig;
  private readonly mailer: Mailer;
  private readonly providerId: string;

  constructor(options: EmailLinkStrategyOptions, verify: Strategy.VerifyFunction<SignInResult, EmailVerifyOptions>) {
    super(verify);
    this.config = options.config;
    this.mailer = options.mailer;
    this.providerId = options.providerId ?? EMAIL_PROVIDER_ID;
  }

  /**
   * Sending a link ends in a thrown redirect (to verify-request, or back to the form); using one
   * resolves to the signed-in user. Failures are AuthErrors carrying the error codes.
   */
  async authenticate(request: Request): Promise<SignInResult> {
    const ar = authRequest(request, this.config);
    const base = `${this.config.basePath}`;
    const method = request.method.toUpperCase();
    if (method === "POST" && ar.url.pathname === `${base}/signin/${this.providerId}`) {
      return this.sendLink(ar, await readBody(request));
    }
    if (ar.url.pathname === `${base}/callback/${this.providerId}`) {
      const params = method === "POST" ? await readBody(request) : Object.fromEntries(ar.url.searchParams);
      // The code form of the verify-request page posts a code and no token.
      if (method === "POST" && params.token === undefined && params.code !== undefined) return this.useCode(ar, params.code);
      return this.useLink(ar, params.token ?? null, params.email ?? null);
    }
    throw new AuthError("Configuration", { log: `email strategy reached by ${method} ${ar.url.pathname}` });
  }

  private async sendLink(ar: AuthRequest, form: Body): Promise<never> {
    const raw = form.email;
    const check = normalizeEmailAddress(raw);
    if (!check.ok) {
      // Back to the form with the typed value, nothing stored, nothing sent.
      log("info", "email-address-refused", { reason: check.reason });
      const typed = typeof raw === "string" ? raw.slice(0, MAX_EMAIL_ADDRESS_LENGTH) : "";
      throw redirectResponse(errorUrl(ar, "EmailInvalid", typed ? { email: typed } : {}));
    }
    const address = check.address;

    // Both limits answer alike for every address, known or not.
    const ip = clientAddress(ar);
    const refused = await countEmailSend(this.config.rateLimits, address, ip);
    if (refused) {
      await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: refused.limit } });
      throw new AuthError("RateLimited", { log: `e-mail sign-in limit ${refused.limit}`, retryAfterSeconds: refused.retryAfterSeconds, limit: refused.limit });
    }

    const { url: callbackUrl } = resolveCallbackUrl(ar, form);
    const { setCookie } = await sendLinkEmail(ar, {
      address,
      purpose: "signin",
      maxAgeSeconds: this.config.emailTokenMaxAge,
      // ar.origin is AUTH_URL when set; request headers only count with AUTH_TRUST_HOST.
      link: (token) => signInLink(ar, token, address, callbackUrl, this.providerId),
      message: (url, code) => signInMessage({ to: address, url, host: new URL(ar.origin).host, maxAgeSeconds: this.config.emailTokenMaxAge, code }),
      callbackUrl,
    });
    // No user lookup on this path: known and unknown addresses do the same work.
    await recordEvent("email-sent", { ...eventSource(ar), detail: { purpose: "signin", transport: this.mailer.kind } });
    throw redirectResponse(`${ar.origin}${this.config.basePath}/verify-request?${new URLSearchParams({ provider: this.providerId, type: "email" })}`, {
      setCookies: [setCookie],
    });
  }

  /** A code typed in the browser that asked (its authjs.email-code cookie names the request). */
  private async useCode(ar: AuthRequest, code: unknown): Promise<SignInResult> {
    const typed = typedCode(code);
    if (typed === null) throw codeRefusedResponse(null, "emailCode.required");
    const attempt = await attemptEmailCode(ar, typed, ["signin", "signup"]);
    if (attempt.result === "wrong") throw codeRefusedResponse(attempt.triesLeft, "emailCode.wrong");
    if (attempt.result === "limited") {
      await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: attempt.refusal.limit } });
      throw new AuthError("RateLimited", { log: `e-mail code limit ${attempt.refusal.limit}`, retryAfterSeconds: attempt.refusal.retryAfterSeconds, limit: attempt.refusal.limit });
    }
    if (attempt.result === "ended") throw new AuthError("Verification", { log: "e-mail code for no live request of this browser" });
    return this.finish(ar, attempt.request);
  }

  private async useLink(ar: AuthRequest, token: unknown, email: unknown): Promise<SignInResult> {
    const check = normalizeEmailAddress(email);
    if (!check.ok) throw new AuthError("Verification", { log: `link without a valid email parameter (${check.reason})` });
    // A sign-up link finishes with the password typed at sign-up only in the browser that asked
    // (ADR 061); elsewhere the page asks for a password first (signin/email-link-page.server.ts),
    // and nothing reaches here: refused without using the link up.
    const signUp = await peekToken({ identifier: check.address, token, purpose: "signup", secrets: this.config.secrets });
    if (signUp && !(await browserAskedFor(ar, signUp.requestId))) {
      throw new AuthError("Verification", { log: "sign-up link from a browser that did not ask, without a password chosen there" });
    }
    const used = await consumeTokenRow({ identifier: check.address, token, purposes: ["signin", "signup"], secrets: this.config.secrets });
    if (!used) throw new AuthError("Verification", { log: "e-mail link used, expired, unknown or for another address" });
    return this.finish(ar, used);
  }

  private finish(ar: AuthRequest, used: UsedRequest): Promise<SignInResult> {
    const signUp = used.purpose === "signup" && used.passwordHash ? { passwordHash: used.passwordHash, name: used.name } : null;
    if (used.purpose === "signup" && !signUp) throw new AuthError("Verification", { log: "sign-up request without its password" });
    return this.verify({ email: used.identifier, request: ar.request, signUp });
  }
}

/** The link of a sign-in e-mail (also what a sign-up for a known address sends). */
export function signInLink(ar: AuthRequest, token: string, address: string, callbackUrl: string, providerId = EMAIL_PROVIDER_ID): string {
  return `${ar.origin}${ar.config.basePath}/callback/${providerId}?${new URLSearchParams({ token, email: address, callbackUrl })}`;
}

function isUniqueViolation(error: unknown) {
  return (error as { code?: string } | null)?.code === "P2002";
}

/**
 * The verify step: the owner of `email` signs in. An unknown address becomes a new user whose
 * address is verified; a known one is marked verified (reading the mail proves it).
 */
export async function signInByEmail({ email, request, signUp }: EmailVerifyOptions): Promise<SignInResult> {
  const client = db();
  const now = new Date();
  // Where the account was created from (address and device), as every other event records it.
  const source = eventSource(authRequest(request));
  if (signUp) return finishSignUp(email, signUp, source, now);
  const existing = await client.user.findUnique({ where: { email } });
  if (!existing) {
    try {
      const user = await client.user.create({ data: { email, emailVerified: now } });
      await recordEvent("user-created", { userId: user.id, ...source, detail: { provider: EMAIL_PROVIDER_ID } });
      return { user: toSessionUser(user), isNewUser: true };
    } catch (error) {
      // Two links for one new address used at the same moment: the other request created it.
      if (!isUniqueViolation(error)) throw error;
    }
  }
  const user = existing ?? (await client.user.findUniqueOrThrow({ where: { email } }));
  if (user.emailVerified) return { user: toSessionUser(user), isNewUser: false };
  const verified = await client.user.update({ where: { id: user.id }, data: { emailVerified: now } });
  return { user: toSessionUser(verified), isNewUser: false };
}

/**
 * A sign-up proved by its link or code: only now does the user exist, with
 * the address verified, the pending password hash and the name. An address that has an account by
 * now ends on Verification and sets nothing; finishing ends every other pending sign-up for it.
 */
async function finishSignUp(
  email: string,
  signUp: { passwordHash: string; name: string | null },
  source: ReturnType<typeof eventSource>,
  now: Date,
): Promise<SignInResult> {
  let user;
  try {
    user = await db().$transaction(async (tx) => {
      if (await tx.user.findUnique({ where: { email }, select: { id: true } })) return null;
      const created = await tx.user.create({ data: { email, emailVerified: now, name: signUp.name } });
      // Chosen under the single-factor floor (a new account has no second factor: ADR 084).
      await tx.password.create({ data: { userId: created.id, hash: signUp.passwordHash, singleFactorFloorMet: getConfig().passwordMinLength } });
      await tx.verificationToken.deleteMany({ where: { identifier: email, purpose: "signup" } });
      return created;
    });
  } catch (error) {
    // Two sign-ups for one address finished at the same moment: the other one created it.
    if (!isUniqueViolation(error)) throw error;
    user = null;
  }
  if (!user) throw new AuthError("Verification", { log: "sign-up finished for an address that has an account" });
  await recordEvent("user-created", { userId: user.id, ...source, detail: { provider: EMAIL_PROVIDER_ID, signUp: true } });
  return { user: toSessionUser(user), isNewUser: true };
}

/** The callback leg: a POST (the confirmation page, or the code form) must carry the CSRF token. */
async function emailCallback(ctx: FlowContext): Promise<Response> {
  const post = ctx.ar.request.method.toUpperCase() === "POST";
  if (post && !verifyCsrf(ctx.ar, ctx.body.csrfToken)) {
    return errorRedirect(ctx.ar, "MissingCSRF", { json: ctx.json });
  }
  // A code that signs in, or ends the request, also ends this browser's code cookie; a wrong
  // code's answer (a Response passed through as is) keeps it.
  if (post && ctx.body.token === undefined && ctx.body.code !== undefined) ctx.setCookies.push(clearEmailCodeCookie(ctx.ar));
  return runStrategy(ctx, EMAIL_PROVIDER_ID);
}

/** Offered when SMTP is configured, or outside production (dev outbox). */
function emailProviders(config: AuthConfig): Provider[] {
  const mailer = getMailer(config);
  if (!mailer) return [];
  return [
    {
      id: EMAIL_PROVIDER_ID,
      name: "Email",
      type: "email",
      strategy: new EmailLinkStrategy({ config, mailer }, signInByEmail) as Provider["strategy"],
      signIn: (ctx) => runStrategy(ctx, EMAIL_PROVIDER_ID),
      callback: emailCallback,
      callbackMethods: ["GET", "POST"],
      callbackRequiresCsrf: false,
      reauthenticate: reauthenticateByEmail,
    },
  ];
}

export const emailMethod: SignInMethod = { providers: emailProviders };
