// Adding or changing a user's e-mail address from /account: the new address only replaces the old
// one once a link sent to it has been used. The token rules are those of sign-in links
// (verification-token.server.ts, purpose "change-email", bound to the user who asked).
//
//   /account  intent=change-email, email=<new>   → link mailed to <new>, nothing changed yet
//   GET  /account/email?token&email               → "Use <new> for your account?" + button
//   POST /account/email (CSRF)                    → token used up, address replaced and verified
//
// The confirmation is always a button, whatever AUTH_EMAIL_CONFIRM says: a mail scanner must not
// be able to change who owns an account, and the extra click costs nothing here.
import { db } from "../../db/client.server";
import { getMailer } from "../../mail/mailer.server";
import { changeEmailMessage } from "../../mail/templates.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { readBody } from "../core/body.server";
import { ensureCsrfToken, verifyCsrf } from "../core/csrf.server";
import { normalizeEmailAddress } from "../core/email-address";
import { limitMessage } from "../core/messages.server";
import { log } from "../core/log.server";
import { countEmailSend } from "../core/limits.server";
import { authRequest, clientAddress, type AuthRequest } from "../core/request.server";
import { isRecentAuth, reauthUrl } from "../core/recent-auth.server";
import { getSession, refreshSession, revokeUserSessions } from "../core/session.server";
import { notifySecurityChange, sendQueuedNotices } from "../accounts/security-notices.server";
import { EMAIL_CHANGE_PATH } from "./change";
import { toSessionUser } from "../accounts/users.server";
import { consumeToken, discardToken, issueToken, peekToken } from "./verification-token.server";
import { t } from "../../i18n/t.server";
import { inRecipientLanguage } from "../../i18n/user-locale.server";

/** Whether /account can offer the change at all (production without SMTP cannot send). */
export function emailChangeAvailable(ar: AuthRequest): boolean {
  return getMailer(ar.config) !== null;
}

export type EmailChangeRequest = { ok: true; address: string } | { ok: false; error: string; status: number; refused?: "emailInvalid" | "emailSame" };

/** The /account intent: validate, rate-limit, store the token, send the link to the new address. */
export async function requestEmailChange(
  ar: AuthRequest,
  user: { id: string; email: string | null; emailVerified: Date | null },
  input: unknown,
): Promise<EmailChangeRequest> {
  const mailer = getMailer(ar.config);
  if (!mailer) return { ok: false, error: t("emailChange.unavailable"), status: 400 };
  const check = normalizeEmailAddress(input);
  if (!check.ok) return { ok: false, error: t("emailChange.invalid"), status: 400, refused: "emailInvalid" };
  const address = check.address;
  // The same address again is allowed while it is unverified: the link then verifies it.
  if (address === user.email && user.emailVerified) return { ok: false, error: t("emailChange.same"), status: 400, refused: "emailSame" };

  const ip = clientAddress(ar);
  const refused = await countEmailSend(ar.config.rateLimits, address, ip);
  if (refused) {
    await recordEvent("rate-limited", { userId: user.id, ...eventSource(ar), detail: { bucket: refused.limit } });
    return { ok: false, error: limitMessage(refused), status: 429 };
  }

  // Whether another account already uses the address is not checked here: the answer would tell
  // a signed-in user which addresses have accounts. The owner of the address finds out when they
  // use the link, and only they can.
  const { token } = await issueToken({
    identifier: address,
    purpose: "change-email",
    userId: user.id,
    maxAgeSeconds: ar.config.emailTokenMaxAge,
    secrets: ar.config.secrets,
  });
  const link = `${ar.origin}${EMAIL_CHANGE_PATH}?${new URLSearchParams({ token, email: address })}`;
  try {
    const message = await inRecipientLanguage({ userId: user.id }, "request", () =>
      changeEmailMessage({ to: address, url: link, host: new URL(ar.origin).host, maxAgeSeconds: ar.config.emailTokenMaxAge }),
    );
    await mailer.send({ ...message, purpose: "change-email" });
  } catch (error) {
    await discardToken(address, token, ar.config.secrets);
    log("warn", "auth-failure", { code: "EmailSignin", reason: "change-email message not sent", cause: error, path: ar.url.pathname });
    return { ok: false, error: t("error.EmailSignin"), status: 502 };
  }
  await recordEvent("email-sent", { userId: user.id, ...eventSource(ar), detail: { purpose: "change-email", transport: mailer.kind } });
  return { ok: true, address };
}

export type EmailChangePage =
  | { state: "confirm"; address: string; token: string; csrfToken: string }
  | { state: "invalid" };

/** GET /account/email: shows the button for a valid link, without using it. */
export async function emailChangePageData(request: Request): Promise<{ page: EmailChangePage; setCookies: string[] }> {
  const ar = authRequest(request);
  const token = ar.url.searchParams.get("token");
  const check = normalizeEmailAddress(ar.url.searchParams.get("email"));
  const row =
    check.ok && token !== null
      ? await peekToken({ identifier: check.address, token, purpose: "change-email", secrets: ar.config.secrets })
      : null;
  if (!row || !check.ok || token === null) return { page: { state: "invalid" }, setCookies: [] };
  const csrf = ensureCsrfToken(ar);
  return { page: { state: "confirm", address: check.address, token, csrfToken: csrf.token }, setCookies: csrf.setCookie ? [csrf.setCookie] : [] };
}

export type EmailChangeOutcome =
  | { state: "changed"; address: string; signedIn: boolean; setCookies: string[] }
  | { state: "invalid" | "taken" | "expired-form" }
  /** Not confirmed from a recent sign-in of the account that asked (ADR 058): sign in again at `url`, then press the button. */
  | { state: "reauth"; url: string };

class AddressTaken extends Error {}

/** POST /account/email: uses the token and replaces the address, in one transaction. */
export async function confirmEmailChange(request: Request): Promise<EmailChangeOutcome> {
  const ar = authRequest(request);
  const body = await readBody(request).catch(() => ({}) as Record<string, unknown>);
  if (!verifyCsrf(ar, body.csrfToken)) return { state: "expired-form" };
  const check = normalizeEmailAddress(body.email);
  if (!check.ok) return { state: "invalid" };
  const address = check.address;
  const lookup = { identifier: address, token: body.token, purpose: "change-email" as const, secrets: ar.config.secrets };

  // Only the account's own recent sign-in confirms (ADR 058): a copied cookie of any age, or no
  // cookie at all, never moves the account to another address. Checked before the token is used,
  // so the owner signs in again and presses the same button.
  const pending = await peekToken(lookup);
  if (!pending?.userId) return { state: "invalid" };
  const { session } = await getSession(ar, { roll: false });
  if (session?.userId !== pending.userId || !(await isRecentAuth(ar, session))) {
    const page = `${EMAIL_CHANGE_PATH}?${new URLSearchParams({ token: String(body.token), email: address })}`;
    return { state: "reauth", url: reauthUrl(ar, page) };
  }

  let user;
  try {
    user = await db().$transaction(async (tx) => {
      // The row's user is fixed when it is written; the conditional delete decides who uses it.
      const row = await peekToken(lookup, tx);
      if (!row?.userId || row.userId !== session.userId || !(await consumeToken(lookup, tx))) return null;
      const before = await tx.user.findUnique({ where: { id: row.userId }, select: { email: true } });
      try {
        const changed = await tx.user.update({ where: { id: row.userId }, data: { email: address, emailVerified: new Date() } });
        // Both addresses hear of it, the old one first of all: its owner may not have asked.
        await notifySecurityChange(ar, changed.id, { kind: "email-changed", from: before?.email ?? null, to: address }, { tx, recipients: [before?.email ?? null, address] });
        return changed;
      } catch (error) {
        // Unique e-mail: another account has it. Roll back so the link is not used up.
        if ((error as { code?: string }).code === "P2002") throw new AddressTaken();
        throw error;
      }
    });
  } catch (error) {
    if (error instanceof AddressTaken) return { state: "taken" };
    throw error;
  }
  if (!user) return { state: "invalid" };
  sendQueuedNotices();

  // The browser that confirms is the user's own: it stays signed in, with the new address at
  // once (its cookie re-issued after the cut-off); every other session of the user ends (ADR 036).
  const count = await revokeUserSessions(user.id, { except: session.sessionId });
  await recordEvent("email-changed", { userId: user.id, ...eventSource(ar), detail: { count } });
  const refreshed = await refreshSession(ar, toSessionUser(user), { kept: true });
  return { state: "changed", address, signedIn: true, setCookies: refreshed.setCookies };
}
