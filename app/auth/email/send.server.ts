// Sending one e-mailed link (and its code): the row first, then the message; a message that could
// not be sent takes its row with it (ADR 020). Shared by sign-in links, sign-up and password
// resets, so every such e-mail carries a code the same way. Written in the
// language of the account at the address, else of the request that asked (ADR 108).
import { getMailer } from "../../mail/mailer.server";
import type { MailCode } from "../../mail/templates.server";
import type { MailMessage } from "../../mail/types";
import { inRecipientLanguage } from "../../i18n/user-locale.server";
import { AuthError } from "../core/errors";
import { log } from "../core/log.server";
import type { AuthRequest } from "../core/request.server";
import { emailCodeCookie } from "./email-code.server";
import type { TokenPurpose } from "./pending-request";
import { discardToken, issueToken } from "./verification-token.server";

export type LinkEmail = {
  address: string;
  purpose: TokenPurpose;
  /** The link's lifetime, in seconds. */
  maxAgeSeconds: number;
  /** The link for a token. */
  link: (token: string) => string;
  message: (link: string, code: MailCode) => MailMessage;
  /** Where a right code lands (kept in the sealed cookie, validated again when used). */
  callbackUrl?: string | null;
  pending?: { passwordHash: string; name: string | null };
  /**
   * Name the request in this browser's authjs.email-code cookie even when codes are off
   * (AUTH_EMAIL_CODE=false), for as long as the link lives: a sign-up's link then finishes in the
   * browser that signed up without asking for the password again (ADR 061). Both answers of a
   * sign-up — a new address, one with an account — ask for it, so they set the same cookies.
   */
  bindBrowser?: boolean;
  /**
   * "now" (default): wait for the transport, a failure is EmailSignin. "background": answer at once
   * and send afterwards (a failure removes the row and is logged), so the answer takes the same
   * time whether or not there was anything to send. "never": store the request, send nothing — the
   * same work as a request whose e-mail is sent, for an address that must receive nothing.
   */
  deliver?: "now" | "background" | "never";
};

/**
 * Stores the request, sends its e-mail and returns the authjs.email-code Set-Cookie (null when
 * codes are off, unless `bindBrowser`). A failed send is EmailSignin, and nothing stays behind.
 */
export async function sendLinkEmail(ar: AuthRequest, email: LinkEmail): Promise<{ setCookie: string | null }> {
  const mailer = getMailer(ar.config);
  if (!mailer) throw new AuthError("EmailSignin", { log: "no mail transport" });
  const { token, code, requestId, expires } = await issueToken({
    identifier: email.address,
    purpose: email.purpose,
    maxAgeSeconds: email.maxAgeSeconds,
    secrets: ar.config.secrets,
    codeMaxAgeSeconds: ar.config.emailCode ? ar.config.emailCodeMaxAge : null,
    pending: email.pending,
    bindRequest: email.bindBrowser,
  });
  const link = email.link(token);
  const mailCode = code ? { code: code.code, maxAgeSeconds: Math.round((code.expires.getTime() - Date.now()) / 1000) } : null;
  const deliver = email.deliver ?? "now";
  const send = async () => {
    try {
      // In the language of the account at that address when it has one (ADR 108), else of the request.
      const message = await inRecipientLanguage({ address: email.address }, "request", () => email.message(link, mailCode));
      await mailer.send({ ...message, purpose: email.purpose });
    } catch (error) {
      await discardToken(email.address, token, ar.config.secrets);
      throw new AuthError("EmailSignin", { log: `${email.purpose} e-mail not sent`, cause: error });
    }
  };
  if (deliver === "now") await send();
  else if (deliver === "background") {
    // After this answer is on its way: rendering the message and opening the SMTP connection take
    // milliseconds that would otherwise tell an address with an account from one without.
    setImmediate(() => {
      send().catch((error) => log("warn", "auth-failure", { code: "EmailSignin", reason: (error as Error).message, cause: (error as Error).cause }));
    });
  }
  // The cookie lives as long as the code, or — no code, a bound browser — as long as the link.
  const named = code ? { requestId: code.requestId, until: code.expires } : requestId ? { requestId, until: expires } : null;
  if (!named) return { setCookie: null };
  return {
    setCookie: await emailCodeCookie(ar, { requestId: named.requestId, purpose: email.purpose, callbackUrl: email.callbackUrl ?? null }, named.until),
  };
}
