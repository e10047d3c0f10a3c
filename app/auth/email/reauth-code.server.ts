// A code e-mailed to the signed-in user's own address, for /auth/reauth (ADR 080).
// Two forms: "send me a code", then the code. The request is a VerificationToken row of purpose
// `reauth` (the link it also gets is never sent), named by the sealed authjs.email-code cookie
// together with the session that asked — so the code works only in this browser, in this session,
// for this user. The limits are section 15's: sends count against the address's and the client's
// budgets, each code survives five wrong tries, and wrong codes count against the address's budget.
import { getMailer } from "../../mail/mailer.server";
import { reauthCodeMessage } from "../../mail/templates.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { countEmailSend } from "../core/limits.server";
import { log } from "../core/log.server";
import { limitMessage } from "../core/messages.server";
import { clientAddress } from "../core/request.server";
import type { ReauthContext, ReauthOutcome, ReauthRefusal } from "../signin/provider";
import { reauthSubject } from "../signin/flow.server";
import { t } from "../../i18n/t.server";
import { inRecipientLanguage } from "../../i18n/user-locale.server";
import { attemptEmailCode, emailCodeCookie, typedCode } from "./email-code.server";
import { discardToken, issueToken } from "./verification-token.server";

const codeStep = (status: number, code: "Verification" | "RateLimited", message: string, retryAfterSeconds?: number, refused?: ReauthRefusal): ReauthOutcome => ({
  type: "page",
  status,
  error: { code, message, ...(refused ? { refused } : {}) },
  step: "code",
  ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
});

async function sendCode(ctx: ReauthContext, address: string): Promise<ReauthOutcome> {
  const { ar, user } = ctx;
  const refused = await countEmailSend(ar.config.rateLimits, address, clientAddress(ar));
  if (refused) {
    await recordEvent("rate-limited", { userId: user.id, ...eventSource(ar), detail: { bucket: refused.limit } });
    const message = limitMessage(refused);
    return { type: "page", status: 429, error: { code: "RateLimited", message }, step: "choose", retryAfterSeconds: refused.retryAfterSeconds };
  }
  const mailer = getMailer(ar.config);
  const maxAgeSeconds = ar.config.emailCodeMaxAge;
  const { token, code } = await issueToken({
    identifier: address,
    purpose: "reauth",
    userId: user.id,
    maxAgeSeconds,
    secrets: ar.config.secrets,
    codeMaxAgeSeconds: maxAgeSeconds,
  });
  try {
    if (!mailer || !code) throw new Error("no mail transport");
    const message = await inRecipientLanguage({ userId: user.id }, "request", () => reauthCodeMessage({ to: address, origin: ar.origin, code: code.code, maxAgeSeconds }));
    await mailer.send(message);
  } catch (error) {
    await discardToken(address, token, ar.config.secrets);
    log("warn", "auth-failure", { code: "EmailSignin", reason: "re-authentication code not sent", cause: error });
    return { type: "page", status: 503, error: { code: "EmailSignin", message: t("error.EmailSignin") }, step: "choose" };
  }
  await recordEvent("email-sent", { userId: user.id, ...eventSource(ar), detail: { purpose: "reauth", transport: mailer.kind } });
  const cookie = await emailCodeCookie(ar, { requestId: code.requestId, purpose: "reauth", callbackUrl: null, session: reauthSubject(ctx.session) }, code.expires);
  return { type: "page", status: 200, error: null, step: "code", setCookies: [cookie] };
}

/** POST /auth/reauth with `provider=email`: `step=send` mails a code, `step=code` checks one. */
export async function reauthenticateByEmail(ctx: ReauthContext): Promise<ReauthOutcome> {
  const address = ctx.user.email;
  if (!address) return { type: "page", status: 400, error: { code: "Verification", message: t("reauth.codeEnded"), refused: { kind: "codeEnded" } }, step: "choose" };
  if (ctx.body.step === "send") return sendCode(ctx, address);

  const typed = typedCode(ctx.body.code);
  if (!typed) return codeStep(400, "Verification", t("emailCode.required"), undefined, { kind: "codeRequired" });
  const subject = reauthSubject(ctx.session);
  const attempt = await attemptEmailCode(ctx.ar, typed, ["reauth"], new Date(), (p) => p.session === subject);
  switch (attempt.result) {
    case "used":
      // The cookie names only this session's requests, all for its user's address; an address
      // changed since the code was sent is no longer the account's mailbox.
      if (attempt.request.identifier !== address) {
        return { type: "page", status: 400, error: { code: "Verification", message: t("reauth.codeEnded"), refused: { kind: "codeEnded" } }, step: "choose" };
      }
      return { type: "proved", providerType: "email" };
    case "wrong":
      await recordEvent("signin-failed", { userId: ctx.user.id, ...eventSource(ctx.ar), detail: { provider: "email", intent: "reauth" } });
      return codeStep(400, "Verification", attempt.message, undefined, { kind: "codeWrong", triesLeft: attempt.triesLeft });
    case "limited":
      return codeStep(429, "RateLimited", limitMessage(attempt.refusal), attempt.refusal.retryAfterSeconds);
    case "ended":
      return { type: "page", status: 400, error: { code: "Verification", message: t("reauth.codeEnded"), refused: { kind: "codeEnded" } }, step: "choose" };
  }
}
