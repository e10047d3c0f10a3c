// Security e-mails (ADR 059): the owner hears of every change to how the
// account is protected — from the device that made it — so a change they did not make is noticed
// while it can still be undone. Each is queued in the durable mail queue (app/mail/queue.server.ts)
// with the change (inside its transaction where the caller has one), never sent while the user
// waits. AUTH_SECURITY_EMAILS=false turns them off. The sentences live here, one per change.
// Each carries its own single-use "This wasn't me" link (./wasnt-me.server.ts, ADR 081), the
// device (a summary of the User-Agent), the approximate place when a place lookup is registered
// (registerPlaceLookup; none by default) and the time, in UTC. Every notice is written in the
// owner's own language (the user row's `locale`, ADR 108), never in the language of the request
// that made the change — a thief's browser must not choose it; an account with none stored gets
// English.
import { describeDevice } from "../../components/device";
import { DEFAULT_LOCALE, isLocale, type Locale } from "../../i18n/languages.server";
import { runWithLocale, t } from "../../i18n/t.server";
import { db } from "../../db/client.server";
import { getMailer } from "../../mail/mailer.server";
import { enqueueMail, isCoalesced, wakeMailSender, type QueueOptions } from "../../mail/queue.server";
import { securityNoticeMessage, siteName } from "../../mail/templates.server";
import { log } from "../core/log.server";
import { clientAddress, type AuthRequest } from "../core/request.server";
import { mailSafeName } from "../core/display-text";
import { issueWasntMeLink } from "./wasnt-me.server";

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

export type SecurityChange =
  | { kind: "email-changed"; from: string | null; to: string }
  | { kind: "password-set" | "password-changed" | "password-removed" | "password-reset" }
  | { kind: "account-linked" | "account-unlinked"; provider: string }
  | { kind: "second-factor-on" | "second-factor-off" | "recovery-codes-replaced" }
  | { kind: "passkey-added" | "passkey-removed"; name: string | null }
  | { kind: "sessions-ended"; scope: "one" | "others" | "all" }
  | { kind: "signin-new-device" | "account-deleted" }
  /** The summary of the new-device sign-ins after the first of an hour (notifyNewDeviceSignIn). */
  | { kind: "signin-new-device"; more: true }
  | { kind: "recovery-code-used"; left: number }
  // The first grant to an app through Vestibule's OAuth provider (docs/features/provider.md).
  | { kind: "app-allowed"; name: string; host: string | null }
  // To every owner of an organization: one of its break-glass owners signed in another way than
  // its connection while it requires one (docs/features/organizations.md#policy).
  | { kind: "break-glass-used"; organization: string; person: string };

/** The subject and the one sentence of each change, in the current language (the owner's, queueNotices). */
function describe(change: SecurityChange): { subject: string; what: string } {
  const site = siteName();
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
        // The passkey's name is whoever named it's words: plain text, no link (core/display-text.ts).
        what: mailSafeName(change.name) ? t(`notice.${change.kind}.whatNamed`, { name: mailSafeName(change.name)! }) : t(`notice.${change.kind}.what`),
      };
    case "sessions-ended":
      return { subject: t("notice.sessions-ended.subject", { site }), what: t(`notice.sessions-ended.${change.scope}`) };
    case "signin-new-device":
      if ("more" in change) return { subject: t("notice.signin-new-device-more.subject", { site }), what: t("notice.signin-new-device-more.what") };
      return { subject: t("notice.signin-new-device.subject", { site }), what: t("notice.signin-new-device.what") };
    case "recovery-code-used":
      return { subject: t("notice.recovery-code-used.subject", { site }), what: t("notice.recovery-code-used.what", { left: change.left }) };
    case "app-allowed":
      // The app's name is whoever registered it's words: plain text, no link, and its host beside it.
      // An app on a device has no host to name: it is said to be on a device, never its client_id as a host.
      if (change.host === null) return { subject: t("notice.app-allowed.subject", { site }), what: t("notice.app-allowed.whatDevice", { name: mailSafeName(change.name) ?? t("notice.app-allowed.deviceApp") }) };
      return { subject: t("notice.app-allowed.subject", { site }), what: t("notice.app-allowed.what", { name: mailSafeName(change.name) ?? change.host, host: change.host }) };
    case "break-glass-used":
      // The organization's and the person's names are others' words: plain text, no link.
      return {
        subject: t("notice.break-glass-used.subject", { site }),
        what: t("notice.break-glass-used.what", { organization: mailSafeName(change.organization) ?? "?", person: mailSafeName(change.person) ?? "?" }),
      };
    default:
      return { subject: t(`notice.${change.kind}.subject`, { site }), what: t(`notice.${change.kind}.what`) };
  }
}

/**
 * The approximate place of a client address ("Lyon, France"), or null. None by default: an
 * operator with a local geolocation database registers a lookup at start (ADR 081); no address
 * is ever sent elsewhere to be placed.
 */
export type PlaceLookup = (address: string) => string | null;
let placeLookup: PlaceLookup | null = null;

export function registerPlaceLookup(lookup: PlaceLookup | null): void {
  placeLookup = lookup;
}

function placeOf(ar: AuthRequest): string | null {
  const address = clientAddress(ar);
  if (!placeLookup || !address) return null;
  try {
    return mailSafeName(placeLookup(address));
  } catch (error) {
    log("warn", "place-lookup-failed", { error });
    return null;
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
  {
    tx,
    recipients,
    now = new Date(),
    byOperator = false,
    locale,
  }: { tx?: Tx; recipients?: (string | null)[]; now?: Date; byOperator?: boolean; locale?: Locale | null } = {},
): Promise<void> {
  if (!ar.config.securityEmails || !getMailer(ar.config)) return;
  const queue = async () => {
    // Inside the change's transaction when there is one: on PostgreSQL a read on another
    // connection would wait for a free one while this transaction holds its own.
    const client = tx ?? db();
    const row = recipients && locale !== undefined ? null : await client.user.findUnique({ where: { id: userId }, select: { email: true, locale: true } });
    const to = recipients ?? [row?.email ?? null];
    // The owner's language (ADR 108); `locale`: the caller read it already (a deleted account's
    // row is gone). None stored: English, never the requester's.
    const language = locale !== undefined ? locale : isLocale(row?.locale) ? row.locale : null;
    await runWithLocale(language ?? DEFAULT_LOCALE, () => queueNotices(ar, userId, change, to, { tx, now, byOperator }));
  };
  if (tx) return queue();
  try {
    await queue();
  } catch (error) {
    log("error", "security-mail-queue-failed", { kind: change.kind, error });
  }
}

/**
 * The hour new-device notices are coalesced over (ADR 109): the first sign-in from a new browser
 * in each clock hour (UTC) is told at once; the later ones of that hour share one more notice,
 * sent when the hour ends. At most two new-device e-mails per account per hour, however many
 * sign-ins.
 */
export const NEW_DEVICE_NOTICE_WINDOW_MS = 60 * 60 * 1000;

/**
 * A sign-in from a browser without the account's device cookie, coalesced
 * per account (ADR 109). The database decides, on every instance alike: the notice is queued under
 * a key naming the account and the hour, and a second row with that key is refused (unique
 * index), so exactly one sign-in of the hour queues the notice sent now and exactly one of the
 * later ones queues the summary due at the hour's end; every other one queues nothing. Each
 * attempt is its own transaction: a refused one leaves no row and no "This wasn't me" link.
 */
export async function notifyNewDeviceSignIn(ar: AuthRequest, userId: string, { now = new Date() } = {}): Promise<void> {
  if (!ar.config.securityEmails || !getMailer(ar.config)) return;
  const hour = Math.floor(now.getTime() / NEW_DEVICE_NOTICE_WINDOW_MS);
  const hourEnds = new Date((hour + 1) * NEW_DEVICE_NOTICE_WINDOW_MS);
  const attempt = (change: SecurityChange, options: QueueOptions) =>
    db().$transaction(async (tx) => {
      const row = await tx.user.findUnique({ where: { id: userId }, select: { email: true, locale: true } });
      // The owner's language, as every notice (ADR 108): a thief's browser chooses nothing here.
      const language = isLocale(row?.locale) ? row.locale : DEFAULT_LOCALE;
      await runWithLocale(language, () => queueNotices(ar, userId, change, [row?.email ?? null], { tx, now, queue: options }));
    });
  try {
    // After a "This wasn't me" report (devicesResetAt, ADR 108) the count starts again: the first
    // new browser after it is told at once, not folded into the summary of a thief's earlier ones.
    const since = (await db().user.findUnique({ where: { id: userId }, select: { devicesResetAt: true } }))?.devicesResetAt?.getTime() ?? 0;
    const key = `signin-new-device:${userId}:${hour}:${since}`;
    try {
      await attempt({ kind: "signin-new-device" }, { coalesceKey: key, notBefore: now });
    } catch (error) {
      if (!isCoalesced(error)) throw error;
      try {
        await attempt({ kind: "signin-new-device", more: true }, { coalesceKey: `${key}:more`, notBefore: hourEnds });
      } catch (error) {
        if (!isCoalesced(error)) throw error;
        return; // Already summed up: this sign-in is one of those the summary stands for.
      }
    }
    wakeMailSender();
  } catch (error) {
    log("error", "security-mail-queue-failed", { kind: "signin-new-device", error });
  }
}

/** One notice of `change` to each address, each with its own "This wasn't me" link. */
async function queueNotices(
  ar: AuthRequest,
  userId: string,
  change: SecurityChange,
  to: (string | null)[],
  { tx, now, byOperator = false, queue }: { tx?: Tx; now: Date; byOperator?: boolean; queue?: QueueOptions },
) {
  const base = `${ar.origin}${ar.config.basePath}`;
  const { subject, what } = describe(change);
  // An operator's request is not the owner's: their device and place stay out (templates.server.ts).
  // The device is a summary of a header the client writes: plain text, short, never a link.
  const device = byOperator ? null : (mailSafeName(describeDevice(ar.request.headers.get("User-Agent"), t)) ?? t("device.unknown"));
  const place = byOperator ? null : placeOf(ar);
  for (const address of new Set(to.filter((a): a is string => Boolean(a)))) {
    const message = securityNoticeMessage({
      to: address,
      host: new URL(ar.origin).host,
      subject,
      what,
      at: now,
      device,
      place,
      help: { forgotPasswordUrl: ar.config.credentials ? `${base}/forgot-password` : null, signInUrl: `${base}/signin` },
      wasntMeUrl: await issueWasntMeLink(ar, { userId, address, event: change.kind, tx, now }),
    });
    await enqueueMail({ ...message, kind: change.kind }, tx, queue);
  }
}

/**
 * The notice that the account was deleted, for the deletion to call once the row is gone: it
 * takes the address (the user row can no longer give it). Its "This wasn't me" link records the
 * report for the operator; there is no session or password left to end. Queued and sent at once;
 * a failure is logged, never thrown (the deletion stands).
 */
export async function notifyAccountDeleted(ar: AuthRequest, account: { userId: string; address: string | null; locale?: Locale | null }, now = new Date()): Promise<void> {
  if (!ar.config.securityEmails || !getMailer(ar.config) || !account.address) return;
  try {
    await runWithLocale(account.locale ?? DEFAULT_LOCALE, () => queueNotices(ar, account.userId, { kind: "account-deleted" }, [account.address], { now }));
  } catch (error) {
    log("error", "security-mail-queue-failed", { kind: "account-deleted", error });
  }
}
