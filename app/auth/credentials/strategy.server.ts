// Credentials sign-in: remix-auth-form's FormStrategy against the Password table. Unknown
// addresses, missing passwords and wrong passwords take the same time and give the same answer.
import { FormStrategy } from "remix-auth-form";
import { z } from "zod";
import { db } from "../../db/client.server";
import type { AuthConfig } from "../core/config.server";
import { AuthError, EmailStepUpRequired } from "../core/errors";
import { verifyPassword, MAX_PASSWORD_LENGTH } from "./password.server";
import type { Provider, ReauthContext, ReauthOutcome, SignInMethod } from "../signin/provider";
import { passwordHashOf } from "../accounts/passwords.server";
import { limitMessage, PASSWORD_LIMITED_PARAMS, passwordTriesParams, TRIES_PARAM } from "../core/messages.server";
import { t } from "../../i18n/t.server";
import { deviceIdFor } from "../core/device-cookie.server";
import { devicesResetAt } from "../accounts/wasnt-me.server";
import { consecutiveFailureCeilingReached, countConsecutiveFailure, isLimitRefusal, reserveCredentialsAttempt } from "../core/limits.server";
import { authRequest, clientAddress } from "../core/request.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { toSessionUser, type SignInResult } from "../accounts/users.server";
import { emailAddressField } from "./users.server";
import { runStrategy } from "../signin/flow.server";
import { getMailer } from "../../mail/mailer.server";
import { isBreakGlassOwner, ssoRequiredForAddress } from "../organizations/policy.server";

export const CredentialsInput = z.object({
  email: emailAddressField(),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
});

export function credentialsStrategy(config: AuthConfig) {
  return new FormStrategy<SignInResult>(async ({ form, request }) => {
    const parsed = CredentialsInput.safeParse({ email: form.get("email"), password: form.get("password") });
    if (!parsed.success) throw new AuthError("CredentialsSignin", { log: "malformed credentials" });
    const { email, password } = parsed.data;
    const ar = authRequest(request, config);
    const ip = clientAddress(ar);
    // Checked before anything is looked up or verified: the same counters and the same work for
    // known and unknown addresses (ADR 035).
    const deviceId = await deviceIdFor({ cookies: ar.cookies, secure: ar.secure, secrets: config.secrets }, email, () => devicesResetAt({ email }));
    const reservation = await reserveCredentialsAttempt(config.rateLimits, { address: email, client: ip, deviceId });
    if (isLimitRefusal(reservation)) {
      await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: reservation.limit } });
      throw new AuthError("RateLimited", { log: `credentials limit ${reservation.limit}`, retryAfterSeconds: reservation.retryAfterSeconds, limit: reservation.limit, params: PASSWORD_LIMITED_PARAMS });
    }
    // Past the consecutive-failure ceiling a browser without the account's device cookie must also
    // give a code e-mailed to the address (ADR 083). Read for every address, known or not.
    // Without e-mail delivery there is no code to send: the ceiling does not apply (ADR 083).
    const stepUp = deviceId === null && getMailer(config) !== null && (await consecutiveFailureCeilingReached(config.rateLimits, email));
    // By the domain alone, before the account is looked up: whether an organization requires its
    // connection for this address (ADR 165).
    const ssoDomain = config.organizations ? await ssoRequiredForAddress(email) : null;
    const user = await db().user.findUnique({ where: { email }, include: { password: { select: { hash: true } } } });
    // A disabled user's right password is a wrong one: the same answer, and counted as a failure,
    // so neither the answer nor the limits tell the two apart (ADR 078).
    // The hash is verified for every address, known or not (the dummy hash when there is no
    // password): skipping it for an unknown one would tell the two apart by the answer's time.
    const passwordMatches = await verifyPassword(user?.password?.hash, password);
    const ok = Boolean(user && passwordMatches && !user.disabledAt);
    await reservation.settle(ok);
    if (!ok) {
      await countConsecutiveFailure(config.rateLimits, email);
      await recordEvent("signin-failed", { userId: user?.id ?? null, ...eventSource(ar), detail: { provider: "credentials" } });
    }
    // On a domain that requires its organization's connection, every outcome but a break-glass
    // owner's right password is the same SsoRequired refusal: a wrong password, an unknown address
    // and a right password alike (else the answer would tell whether the password was right, ADR
    // 165 amended). Asked for every address of the domain, known or not, for the same time.
    if (ssoDomain) {
      const exempt = await isBreakGlassOwner(user?.id ?? null);
      if (!(ok && exempt)) {
        if (ok) await recordEvent("signin-failed", { userId: user!.id, ...eventSource(ar), detail: { provider: "credentials", reason: "policy" } });
        throw new AuthError("SsoRequired", { log: "credentials on a domain whose organization requires its connection", params: { domain: ssoDomain } });
      }
    }
    // Right or wrong, the same answer: only a right password's code is sent.
    if (stepUp) throw new EmailStepUpRequired(email, ok);
    // The tries left come from counters kept for every address typed: the same for an unknown one (ADR 160).
    if (!user || !ok) throw new AuthError("CredentialsSignin", { log: "wrong credentials", params: passwordTriesParams(reservation.left) });
    // The count starts again when the session starts (signin/flow.server.ts), after any second factor.
    return { user: toSessionUser(user), isNewUser: false };
  });
}

/**
 * /auth/reauth with the signed-in user's own password (ADR 080): a credentials attempt like a sign-in
 *  — the same counters for the account's address, this client and this
 * browser's device cookie, a wrong password counted and recorded, a right one resetting them. The
 * address is the user's own, never typed: there is nobody else to try.
 */
async function reauthenticateWithPassword(ctx: ReauthContext): Promise<ReauthOutcome> {
  const { ar, user } = ctx;
  const typed = typeof ctx.body.password === "string" && ctx.body.password.length <= MAX_PASSWORD_LENGTH ? ctx.body.password : "";
  const address = user.email ?? `user:${user.id}`;
  const deviceId = user.email ? await deviceIdFor({ cookies: ar.cookies, secure: ar.secure, secrets: ar.config.secrets }, user.email, () => devicesResetAt(user.id)) : null;
  const reservation = await reserveCredentialsAttempt(ar.config.rateLimits, { address, client: clientAddress(ar), deviceId });
  if (isLimitRefusal(reservation)) {
    await recordEvent("rate-limited", { userId: user.id, ...eventSource(ar), detail: { bucket: reservation.limit } });
    const message = limitMessage(reservation);
    return { type: "page", status: 429, error: { code: "RateLimited", message }, step: "choose", retryAfterSeconds: reservation.retryAfterSeconds };
  }
  // Past the consecutive-failure ceiling, a browser without the account's device cookie (a thief's
  // copy of the session cookie) proves nothing with the password alone (ADR 083): otherwise this
  // page would be the way round the sign-in form's step-up, and an oracle for the guesses.
  const stepUp = user.email !== null && deviceId === null && getMailer(ar.config) !== null && (await consecutiveFailureCeilingReached(ar.config.rateLimits, user.email));
  // No password: the dummy hash's work, and the same refusal as a wrong one.
  const stored = await passwordHashOf(user.id);
  const ok = (await verifyPassword(stored, typed)) && typed !== "";
  await reservation.settle(ok);
  if (!ok) {
    // A wrong password here is one more against the account (ADR 083's ceiling counts them all).
    if (user.email) await countConsecutiveFailure(ar.config.rateLimits, user.email);
    await recordEvent("signin-failed", { userId: user.id, ...eventSource(ar), detail: { provider: "credentials", intent: "reauth" } });
  }
  // Right or wrong, the same answer: the e-mailed code on this page is the way on.
  if (stepUp) return { type: "page", status: 400, error: { code: "CredentialsSignin", message: t("reauth.passwordNeedsCode"), refused: { kind: "passwordNeedsCode" } }, step: "choose" };
  if (!ok) {
    // The tries left before the pause, when few are, as the sign-in page says them (ADR 160).
    const tries = Number(passwordTriesParams(reservation.left)[TRIES_PARAM] ?? NaN);
    const triesLeft = tries > 0 ? tries : undefined;
    const message = triesLeft === undefined ? t("reauth.passwordWrong") : `${t("reauth.passwordWrong")} ${t("limit.passwordTriesLeft", { tries: triesLeft })}`;
    return { type: "page", status: 400, error: { code: "CredentialsSignin", message, refused: { kind: "password", ...(triesLeft === undefined ? {} : { triesLeft }) } }, step: "choose" };
  }
  return { type: "proved", providerType: "credentials" };
}

function credentialsProviders(config: AuthConfig): Provider[] {
  if (!config.credentials) return [];
  return [
    {
      id: "credentials",
      name: "Credentials",
      type: "credentials",
      strategy: credentialsStrategy(config) as Provider["strategy"],
      callback: (ctx) => runStrategy(ctx, "credentials"),
      callbackMethods: ["POST"],
      callbackRequiresCsrf: true,
      reauthenticate: reauthenticateWithPassword,
    },
  ];
}

export const credentialsMethod: SignInMethod = { providers: credentialsProviders };
