// The durable mail queue (ADR 059): a message that must not be lost — a security e-mail — is a
// MailQueue row written with the change it reports, and a sender in every instance sends it.
// The user's answer never waits for the mail server; a restart loses nothing (the row stays until
// sent); a mail server outage delays the message (retries with backoff) but does not lose it; and
// two instances never send one row twice: a sender first claims a due row with one conditional
// UPDATE (claimedUntil), which only one claimer can win on PostgreSQL (the row lock, re-checked
// under READ COMMITTED) and on SQLite (one writer at a time).
import { getConfig } from "../auth/core/config.server";
import { log } from "../auth/core/log.server";
import { db } from "../db/client.server";
import { getMailer } from "./mailer.server";
import type { MailMessage } from "./types";

/** How often each instance looks for due messages (a write also wakes this instance's sender). */
export const MAIL_QUEUE_POLL_MS = 5_000;
/** How long a claim holds a row: longer than one SMTP delivery may take (its timeouts). */
export const MAIL_CLAIM_MS = 2 * 60_000;
/** Rows one sender claims per round. */
const CLAIM_BATCH = 20;
/** Retries wait 30 s, 2 min, 8 min, … at most an hour; after this many tries the row is given up (and logged). */
export const MAIL_MAX_ATTEMPTS = 30;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 60 * 60_000;
const MAX_ERROR = 300;
const GIVEN_UP_MS = 100 * 365 * 24 * 60 * 60_000;

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];
type Writer = Tx | ReturnType<typeof db>;

/** What is stored: the rendered message but its recipient (the row's column). */
type QueuedPayload = Omit<MailMessage, "to">;

/** The wait before try number `attempts + 1`, after `attempts` failed tries. */
export function retryDelayMs(attempts: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 4 ** Math.max(0, attempts - 1));
}

/**
 * Queues `message` for sending: inside the caller's transaction when given one (the message
 * exists exactly when the change does), else on its own. Without a transaction it wakes this
 * instance's sender at once; inside one the caller calls wakeMailSender() after the commit (a
 * sender woken before could not see the row yet). The caller never waits for the send.
 */
export async function enqueueMail(message: MailMessage & { kind: string }, tx?: Tx, { coalesceKey, notBefore }: QueueOptions = {}): Promise<void> {
  const { to, kind, ...rest } = message;
  const writer: Writer = tx ?? db();
  await writer.mailQueue.create({
    data: {
      recipient: to,
      kind,
      payload: JSON.stringify(rest satisfies QueuedPayload),
      ...(coalesceKey ? { coalesceKey } : {}),
      ...(notBefore ? { nextAttemptAt: notBefore } : {}),
    },
  });
  if (!tx) wakeMailSender();
}

/**
 * `coalesceKey`: at most one row ever holds it — a second message with the key fails with Prisma's
 * unique-constraint error (P2002), on every instance (ADR 109). `notBefore`: not sent before then.
 */
export type QueueOptions = { coalesceKey?: string; notBefore?: Date };

/** Whether `error` is the refusal of a second row with a coalesceKey already queued. */
export function isCoalesced(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}

type Claimed = { id: string; recipient: string; kind: string; payload: string; attempts: number; claimedUntil: Date };

/**
 * Claims up to `limit` due rows for this sender: each with one conditional UPDATE that succeeds
 * only while no live claim holds the row, so of two claimers exactly one gets it.
 */
export async function claimDueMail(now = new Date(), { limit = CLAIM_BATCH, claimMs = MAIL_CLAIM_MS } = {}): Promise<Claimed[]> {
  const client = db();
  const free = { sentAt: null, nextAttemptAt: { lte: now }, OR: [{ claimedUntil: null }, { claimedUntil: { lte: now } }] };
  const due = await client.mailQueue.findMany({ where: free, orderBy: { nextAttemptAt: "asc" }, take: limit, select: { id: true } });
  const claimed: Claimed[] = [];
  for (const { id } of due) {
    // A claim time no other claimer writes: the mark-as-sent below names it.
    const claimedUntil = new Date(now.getTime() + claimMs + Math.floor(Math.random() * 1000));
    const { count } = await client.mailQueue.updateMany({ where: { id, ...free }, data: { claimedUntil } });
    if (count !== 1) continue;
    const row = await client.mailQueue.findUnique({ where: { id }, select: { id: true, recipient: true, kind: true, payload: true, attempts: true } });
    if (row) claimed.push({ ...row, claimedUntil });
  }
  return claimed;
}

function messageOf(row: Claimed): MailMessage | null {
  try {
    const payload = JSON.parse(row.payload) as QueuedPayload;
    if (typeof payload.subject !== "string" || typeof payload.text !== "string" || typeof payload.html !== "string") return null;
    return { ...payload, to: row.recipient };
  } catch {
    return null;
  }
}

/**
 * One round: claims the due rows and sends each with the configured transport; a sent row is
 * marked sent, a failed one waits for its next try. Returns how many were sent. Never throws.
 */
export async function sendDueMail(now = new Date(), { claimMs = MAIL_CLAIM_MS } = {}): Promise<{ sent: number; failed: number }> {
  const result = { sent: 0, failed: 0 };
  const mailer = getMailer(getConfig());
  if (!mailer) return result;
  let rows: Claimed[];
  try {
    rows = await claimDueMail(now, { claimMs });
  } catch (error) {
    log("warn", "mail-queue-unavailable", { error });
    return result;
  }
  const client = db();
  for (const row of rows) {
    // The batch is sent one row after another: a slow mail server can outlast the claim of a row
    // late in it, which another instance may then have claimed and sent. Each row's claim is
    // renewed, conditionally, right before its send; a row claimed meanwhile is left to its claimer.
    const claimedUntil = new Date(Math.max(Date.now(), now.getTime()) + claimMs + Math.floor(Math.random() * 1000));
    let renewed;
    try {
      renewed = await client.mailQueue.updateMany({ where: { id: row.id, claimedUntil: row.claimedUntil, sentAt: null }, data: { claimedUntil } });
    } catch (error) {
      log("warn", "mail-queue-unavailable", { error });
      break;
    }
    if (renewed.count !== 1) continue;
    const mine = { id: row.id, claimedUntil, sentAt: null };
    const message = messageOf(row);
    try {
      if (!message) throw new Error("unreadable queued message");
      await mailer.send(message);
      // The text goes once sent: a security notice's "This wasn't me" link is live for 7 days, and
      // a copy of the table must not hand it out (the token row itself keeps only a hash).
      await client.mailQueue.updateMany({ where: mine, data: { sentAt: new Date(), claimedUntil: null, attempts: row.attempts + 1, lastError: null, payload: "" } });
      result.sent++;
      log("info", "mail-sent", { kind: row.kind, attempts: row.attempts + 1 });
    } catch (error) {
      result.failed++;
      const attempts = row.attempts + 1;
      const givenUp = attempts >= MAIL_MAX_ATTEMPTS || !message;
      // Given up: no further try (nextAttemptAt a century ahead); cleanup removes the row in time.
      const nextAttemptAt = new Date(Date.now() + (givenUp ? GIVEN_UP_MS : retryDelayMs(attempts)));
      const lastError = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR);
      await client.mailQueue
        .updateMany({ where: mine, data: { attempts, nextAttemptAt, claimedUntil: null, lastError } })
        .catch((e: unknown) => log("warn", "mail-queue-unavailable", { error: e }));
      log(givenUp ? "error" : "warn", givenUp ? "mail-given-up" : "mail-retry", { kind: row.kind, attempts, error });
    }
  }
  return result;
}

type SenderState = { timer: ReturnType<typeof setInterval> | null; running: Promise<unknown> | null; again: boolean };
const STATE = Symbol.for("vestibule.mail-sender");
const holder = globalThis as typeof globalThis & { [STATE]?: SenderState };
const sender = () => (holder[STATE] ??= { timer: null, running: null, again: false });

/** Runs one round now, or once more after the round in progress; never waited for. */
export function wakeMailSender(): void {
  const s = sender();
  if (s.running) {
    s.again = true;
    return;
  }
  s.running = sendDueMail()
    .catch(() => undefined)
    .finally(() => {
      s.running = null;
      if (s.again) {
        s.again = false;
        wakeMailSender();
      }
    });
  startMailSender();
}

/**
 * The instance's sender: a round every MAIL_QUEUE_POLL_MS (unref'd: it never keeps a stopping
 * process alive). Started by the server at boot — so a restart sends what was left — and by the
 * first message this process queues. Returns a function that stops it.
 */
export function startMailSender({ everyMs = MAIL_QUEUE_POLL_MS } = {}): () => void {
  const s = sender();
  if (!s.timer) {
    s.timer = setInterval(wakeMailSender, everyMs);
    s.timer.unref();
  }
  return stopMailSender;
}

export function stopMailSender(): void {
  const s = sender();
  if (s.timer) clearInterval(s.timer);
  s.timer = null;
}

/** For tests and shutdown: resolves once the round in progress (if any) is done. */
export async function mailSenderIdle(): Promise<void> {
  while (sender().running) await sender().running;
}
