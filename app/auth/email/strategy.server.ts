// E-mail link sign-in (contract §3, §7, §8; Auth.js's e-mail provider, reference §7).
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
import type { AuthConfig } from "../core/config.server";
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
import { consumeToken, discardToken, issueToken } from "./verification-token.server";

export const EMAIL_PROVIDER_ID = "email";

/** What the verify step is told: an address whose owner just proved they read its mail. */
export type EmailVerifyOptions = { email: string; request: Request };

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
   * resolves to the signed-in user. Failures are AuthErrors carrying the contract's codes.
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
      throw new AuthError("RateLimited", { log: `e-mail sign-in limit ${refused.limit}`, retryAfterSeconds: refused.retryAfterSeconds });
    }

    const { url: callbackUrl } = resolveCallbackUrl(ar, form);
    const { token } = await issueToken({
      identifier: address,
      purpose: "signin",
      maxAgeSeconds: this.config.emailTokenMaxAge,
      secrets: this.config.secrets,
    });
    // ar.origin is AUTH_URL when set; request headers only count with AUTH_TRUST_HOST.
    const link = `${ar.origin}${this.config.basePath}/callback/${this.providerId}?${new URLSearchParams({ token, email: address, callbackUrl })}`;
    try {
      await this.mailer.send(
        signInMessage({ to: address, url: link, host: new URL(ar.origin).host, maxAgeSeconds: this.config.emailTokenMaxAge }),
      );
    } catch (error) {
      await discardToken(address, token, this.config.secrets);
      throw new AuthError("EmailSignin", { log: "sign-in e-mail not sent", cause: error });
    }
    // No user lookup on this path: known and unknown addresses do the same work.
    await recordEvent("email-sent", { ...eventSource(ar), detail: { purpose: "signin", transport: this.mailer.kind } });
    throw redirectResponse(`${ar.origin}${this.config.basePath}/verify-request?${new URLSearchParams({ provider: this.providerId, type: "email" })}`);
  }

  private async useLink(ar: AuthRequest, token: unknown, email: unknown): Promise<SignInResult> {
    const check = normalizeEmailAddress(email);
    if (!check.ok) throw new AuthError("Verification", { log: `link without a valid email parameter (${check.reason})` });
    const used = await consumeToken({ identifier: check.address, token, purpose: "signin", secrets: this.config.secrets });
    if (!used) throw new AuthError("Verification", { log: "e-mail link used, expired, unknown or for another address" });
    return this.verify({ email: check.address, request: ar.request });
  }
}

function isUniqueViolation(error: unknown) {
  return (error as { code?: string } | null)?.code === "P2002";
}

/**
 * The verify step: the owner of `email` signs in. An unknown address becomes a new user whose
 * address is verified; a known one is marked verified (reading the mail proves it).
 */
export async function signInByEmail({ email, request }: EmailVerifyOptions): Promise<SignInResult> {
  const client = db();
  const now = new Date();
  const ip = clientAddress(authRequest(request));
  const existing = await client.user.findUnique({ where: { email } });
  if (!existing) {
    try {
      const user = await client.user.create({ data: { email, emailVerified: now } });
      await recordEvent("user-created", { userId: user.id, ip, detail: { provider: EMAIL_PROVIDER_ID } });
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

/** The callback leg: a POST (from the confirmation page) must carry the CSRF token. */
async function emailCallback(ctx: FlowContext): Promise<Response> {
  if (ctx.ar.request.method.toUpperCase() === "POST" && !verifyCsrf(ctx.ar, ctx.body.csrfToken)) {
    return errorRedirect(ctx.ar, "MissingCSRF", { json: ctx.json });
  }
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
    },
  ];
}

export const emailMethod: SignInMethod = { providers: emailProviders };
