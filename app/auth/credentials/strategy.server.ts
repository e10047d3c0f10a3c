// Credentials sign-in: remix-auth-form's FormStrategy against the Password table. Unknown
// addresses, missing passwords and wrong passwords take the same time and give the same answer.
import { FormStrategy } from "remix-auth-form";
import { z } from "zod";
import { db } from "../../db/client.server";
import type { AuthConfig } from "../core/config.server";
import { AuthError } from "../core/errors";
import { verifyPassword, MAX_PASSWORD_LENGTH } from "./password.server";
import type { Provider, SignInMethod } from "../signin/provider";
import { deviceIdFor } from "../core/device-cookie.server";
import { isLimitRefusal, reserveCredentialsAttempt } from "../core/limits.server";
import { authRequest, clientAddress } from "../core/request.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { toSessionUser, type SignInResult } from "../accounts/users.server";
import { emailAddressField } from "./users.server";
import { runStrategy } from "../signin/flow.server";

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
    const deviceId = await deviceIdFor({ cookies: ar.cookies, secure: ar.secure, secrets: config.secrets }, email);
    const reservation = await reserveCredentialsAttempt(config.rateLimits, { address: email, client: ip, deviceId });
    if (isLimitRefusal(reservation)) {
      await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: reservation.limit } });
      throw new AuthError("RateLimited", { log: `credentials limit ${reservation.limit}`, retryAfterSeconds: reservation.retryAfterSeconds });
    }
    const user = await db().user.findUnique({ where: { email }, include: { password: { select: { hash: true } } } });
    // A disabled user's right password is a wrong one: the same answer, and counted as a failure,
    // so neither the answer nor the limits tell the two apart (ADR 078).
    const ok = (await verifyPassword(user?.password?.hash, password)) && !user?.disabledAt;
    await reservation.settle(Boolean(user && ok));
    if (!user || !ok) {
      await recordEvent("signin-failed", { userId: user?.id ?? null, ...eventSource(ar), detail: { provider: "credentials" } });
      throw new AuthError("CredentialsSignin", { log: "wrong credentials" });
    }
    return { user: toSessionUser(user), isNewUser: false };
  });
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
    },
  ];
}

export const credentialsMethod: SignInMethod = { providers: credentialsProviders };
