// The consecutive-failure ceiling's extra step (NIST SP 800-63B-4 §3.2.2,
// docs/decisions/083): past 100 failed password attempts in a row against an account, a browser
// without the account's device cookie that offers a password is answered as an e-mail sign-in
// request: a code (and link) e-mailed to the address, typed on the verify-request page in this
// browser. Whoever knows the password but cannot read the mailbox never gets in; the owner, who
// reads it, always does. Nothing is ever locked.
//
// The answer never says whether the password was right, nor whether the address has an account:
// the same redirect and the same cookies every time; only a right password for a real account
// has its e-mail sent (after the answer, as the forgotten-password request does), the other
// requests are stored and never sent, so the work and the time are the same.
import { signInMessage } from "../../mail/templates.server";
import { countEmailSend } from "../core/limits.server";
import { AuthError } from "../core/errors";
import { redirectResponse } from "../core/respond.server";
import { clientAddress, type AuthRequest } from "../core/request.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { sendLinkEmail } from "../email/send.server";
import { EMAIL_PROVIDER_ID, signInLink } from "../email/strategy.server";

/**
 * Counts the e-mail send (the limits of section 10, alike for every address) and answers with the
 * verify-request page; `send`: the password was right for an existing account.
 */
export async function emailStepUpResponse(ar: AuthRequest, callbackUrl: string, address: string, { send }: { send: boolean }): Promise<Response> {
  const refused = await countEmailSend(ar.config.rateLimits, address, clientAddress(ar));
  if (refused) {
    await recordEvent("rate-limited", { ...eventSource(ar), detail: { bucket: refused.limit } });
    throw new AuthError("RateLimited", { log: `step-up e-mail limit ${refused.limit}`, retryAfterSeconds: refused.retryAfterSeconds, limit: refused.limit });
  }
  const host = new URL(ar.origin).host;
  const maxAgeSeconds = ar.config.emailTokenMaxAge;
  const { setCookie } = await sendLinkEmail(ar, {
    address,
    purpose: "signin",
    maxAgeSeconds,
    link: (token) => signInLink(ar, token, address, callbackUrl),
    message: (url, code) => signInMessage({ to: address, url, host, maxAgeSeconds, code }),
    callbackUrl,
    deliver: send ? "background" : "never",
  });
  await recordEvent("email-sent", { ...eventSource(ar), detail: { purpose: "signin", reason: "consecutive-failures" } });
  const next = `${ar.origin}${ar.config.basePath}/verify-request?${new URLSearchParams({ provider: EMAIL_PROVIDER_ID, type: "email" })}`;
  return redirectResponse(next, { setCookies: [setCookie] });
}
