// Security e-mails (contract section 16, ADR 059): the owner hears of every change to how the
// account is protected — from the device that made it — so a change they did not make is noticed
// while it can still be undone. Each is queued in the durable mail queue (app/mail/queue.server.ts)
// with the change (inside its transaction where the caller has one), never sent while the user
// waits. AUTH_SECURITY_EMAILS=false turns them off. The sentences live here, one per change.
import { describeDevice } from "../../components/device";
import { db } from "../../db/client.server";
import { getMailer } from "../../mail/mailer.server";
import { enqueueMail, wakeMailSender } from "../../mail/queue.server";
import { SITE_NAME, securityNoticeMessage } from "../../mail/templates.server";
import { log } from "../core/log.server";
import type { AuthRequest } from "../core/request.server";

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

export type SecurityChange =
  | { kind: "email-changed"; from: string | null; to: string }
  | { kind: "password-set" | "password-changed" | "password-removed" | "password-reset" }
  | { kind: "account-linked" | "account-unlinked"; provider: string }
  | { kind: "second-factor-on" | "second-factor-off" | "recovery-codes-replaced" }
  | { kind: "passkey-added" | "passkey-removed"; name: string | null }
  | { kind: "sessions-ended"; scope: "one" | "others" | "all" };

/** The subject and the one sentence of each change. */
function describe(change: SecurityChange): { subject: string; what: string } {
  switch (change.kind) {
    case "email-changed":
      return {
        subject: `The e-mail address of your ${SITE_NAME} account was changed`,
        what: change.from
          ? `The e-mail address of your account was changed from ${change.from} to ${change.to}. Sign-in links and password resets now go to ${change.to}.`
          : `The e-mail address ${change.to} was added to your account.`,
      };
    case "password-set":
      return { subject: `A password was set on your ${SITE_NAME} account`, what: "A password was set on your account: it can now be used to sign in." };
    case "password-changed":
      return { subject: `Your ${SITE_NAME} password was changed`, what: "The password of your account was changed, and every other device was signed out." };
    case "password-reset":
      return { subject: `Your ${SITE_NAME} password was reset`, what: "The password of your account was reset with a link or code sent to this address." };
    case "password-removed":
      return { subject: `The password of your ${SITE_NAME} account was removed`, what: "The password of your account was removed: it can no longer be used to sign in." };
    case "account-linked":
      return { subject: `${change.provider} was linked to your ${SITE_NAME} account`, what: `Your ${change.provider} account was added to your ways to sign in.` };
    case "account-unlinked":
      return { subject: `${change.provider} was removed from your ${SITE_NAME} account`, what: `Your ${change.provider} account was removed from your ways to sign in, and the devices signed in with it were signed out.` };
    case "second-factor-on":
      return { subject: `Two-step sign-in was turned on for your ${SITE_NAME} account`, what: "An authenticator app was set up as the second factor of your account: signing in now asks for its code." };
    case "second-factor-off":
      return { subject: `Two-step sign-in was turned off for your ${SITE_NAME} account`, what: "The second factor of your account was turned off: signing in no longer asks for an authenticator code." };
    case "recovery-codes-replaced":
      return { subject: `New recovery codes for your ${SITE_NAME} account`, what: "New recovery codes were made for your account; the old ones no longer work." };
    case "passkey-added":
      return { subject: `A passkey was added to your ${SITE_NAME} account`, what: `A passkey${change.name ? ` ("${change.name}")` : ""} was added to your account: it can now be used to sign in.` };
    case "passkey-removed":
      return { subject: `A passkey was removed from your ${SITE_NAME} account`, what: `A passkey${change.name ? ` ("${change.name}")` : ""} was removed from your account, and the devices signed in with it were signed out.` };
    case "sessions-ended":
      return {
        subject: `Devices were signed out of your ${SITE_NAME} account`,
        what:
          change.scope === "one"
            ? "One of the devices signed in to your account was signed out."
            : change.scope === "others"
              ? "Every device signed in to your account was signed out except the one that asked."
              : "Every device signed in to your account was signed out.",
      };
  }
}

/** After the commit of a transaction that queued notices (notifySecurityChange with `tx`): send them now. */
export function sendQueuedNotices(): void {
  wakeMailSender();
}

/**
 * Queues the notice of `change` to the account's address (or `recipients`: an address change
 * tells the old address and the new). Inside `tx` a failure fails the change with it; outside,
 * it is logged and the change stands. Does nothing when turned off or when no mail can be sent.
 */
export async function notifySecurityChange(
  ar: AuthRequest,
  userId: string,
  change: SecurityChange,
  { tx, recipients, now = new Date() }: { tx?: Tx; recipients?: (string | null)[]; now?: Date } = {},
): Promise<void> {
  if (!ar.config.securityEmails || !getMailer(ar.config)) return;
  const queue = async () => {
    const client = tx ?? db();
    const to = recipients ?? [(await client.user.findUnique({ where: { id: userId }, select: { email: true } }))?.email ?? null];
    const base = `${ar.origin}${ar.config.basePath}`;
    const { subject, what } = describe(change);
    for (const address of new Set(to.filter((a): a is string => Boolean(a)))) {
      const message = securityNoticeMessage({
        to: address,
        host: new URL(ar.origin).host,
        subject,
        what,
        at: now,
        device: describeDevice(ar.request.headers.get("User-Agent")),
        help: { forgotPasswordUrl: ar.config.credentials ? `${base}/forgot-password` : null, signInUrl: `${base}/signin` },
        wasntMeUrl: null,
      });
      await enqueueMail({ ...message, kind: change.kind }, tx);
    }
  };
  if (tx) return queue();
  try {
    await queue();
  } catch (error) {
    log("error", "security-mail-queue-failed", { kind: change.kind, error });
  }
}
