// Security e-mails (contract section 16, ADR 059): the owner hears of every change to how the
// account is protected — from the device that made it — so a change they did not make is noticed
// while it can still be undone. Each is queued in the durable mail queue (app/mail/queue.server.ts)
// with the change (inside its transaction where the caller has one), never sent while the user
// waits. AUTH_SECURITY_EMAILS=false turns them off. The sentences live here, one per change.
import { describeDevice } from "../../components/device";
import { t } from "../../i18n/t.server";
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
  | { kind: "account-deleted" }
  | { kind: "passkey-added" | "passkey-removed"; name: string | null }
  | { kind: "sessions-ended"; scope: "one" | "others" | "all" };

/** The subject and the one sentence of each change, in the language of the request that made it. */
function describe(change: SecurityChange): { subject: string; what: string } {
  const site = SITE_NAME;
  switch (change.kind) {
    case "email-changed":
      return {
        subject: t("notice.email-changed.subject", { site }),
        what: change.from ? t("notice.email-changed.what", { from: change.from, to: change.to }) : t("notice.email-added.what", { to: change.to }),
      };
    case "account-linked":
    case "account-unlinked":
      return { subject: t(`notice.${change.kind}.subject`, { site, provider: change.provider }), what: t(`notice.${change.kind}.what`, { provider: change.provider }) };
    case "passkey-added":
    case "passkey-removed":
      return {
        subject: t(`notice.${change.kind}.subject`, { site }),
        what: change.name ? t(`notice.${change.kind}.whatNamed`, { name: change.name }) : t(`notice.${change.kind}.what`),
      };
    case "sessions-ended":
      return { subject: t("notice.sessions-ended.subject", { site }), what: t(`notice.sessions-ended.${change.scope}`) };
    default:
      return { subject: t(`notice.${change.kind}.subject`, { site }), what: t(`notice.${change.kind}.what`) };
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
        device: describeDevice(ar.request.headers.get("User-Agent"), t),
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
