// Deleting what no longer counts (docs/decisions/051): expired sessions of both
// kinds (a revoked row is kept until then: ADR 036), e-mail links past their expiry, rate-limit
// windows that ended, "sign out everywhere" cutoffs whose cookies have all expired, and audit
// events older than AUTH_EVENT_RETENTION_DAYS, and answered passkey challenges past their cookie's life. Run by `npm run db:cleanup` and every hour by the
// server. One transaction: a run deletes everything it found or nothing; inside it, batches.
import { db, dbProvider } from "../../db/client.server";
import { getConfig } from "./config.server";
import { log } from "./log.server";
import { countEvent } from "./metrics.server";

/** The transaction-scoped advisory lock that lets one instance at a time clean up on PostgreSQL. */
export const PG_CLEANUP_LOCK_KEY = 72707370;
/** The server's first run comes this long after its start (plus up to a minute), then every hour. */
export const CLEANUP_FIRST_DELAY_MS = 5 * 60_000;
export const CLEANUP_EVERY_MS = 60 * 60_000;
/** The longest one run may take before its transaction is given up (and nothing is deleted). */
const CLEANUP_TRANSACTION_MS = 10 * 60_000;
const DAY_MS = 24 * 60 * 60_000;
/** A sent security e-mail's row is kept this long (what was sent, for support), an unsent one this long before it is given up for good. */
export const SENT_MAIL_KEPT_DAYS = 7;
export const UNSENT_MAIL_KEPT_DAYS = 30;
/**
 * Rows deleted per statement. Each statement then stays far inside DATABASE_TIMEOUT_MS however
 * large the backlog (a first run over a million expired sessions), where one DELETE per table
 * could time out and leave the backlog for ever.
 */
export const CLEANUP_BATCH = 5_000;
/** A client registered dynamically (AUTH_PROVIDER_REGISTRATION=open) that nobody allowed is removed after this many days. */
export const OAUTH_UNUSED_REGISTRATION_DAYS = 30;

/** Deletes what `find` returns, `batch` keys at a time, until a find comes back short. */
async function inBatches(batch: number, find: (take: number) => Promise<string[]>, remove: (keys: string[]) => Promise<{ count: number }>) {
  let total = 0;
  for (;;) {
    const keys = await find(batch);
    if (keys.length) total += (await remove(keys)).count;
    if (keys.length < batch) return total;
  }
}

export type CleanupCounts = {
  sessions: number;
  sessionCutoffs: number;
  verificationTokens: number;
  limitCounters: number;
  authEvents: number;
  passkeyChallenges: number;
  sessionRevocations: number;
  mailQueue: number;
  /** What the OAuth provider keeps (codes, tokens, grants, sessions) past its expiry, and its signing keys no longer published. */
  oauthPayloads: number;
  oauthSigningKeys: number;
  /** Clients registered dynamically that no user allowed within OAUTH_UNUSED_REGISTRATION_DAYS. */
  oauthRegistrations: number;
  /** Back-channel logouts sent or given up (ADR 145), and expired records of apps in sessions. */
  backchannelLogouts: number;
  oauthSessionApps: number;
  // Expired SAML requests and assertion ids (ADR 154).
  samlRows: number;
};
export type CleanupResult = { ran: true; counts: CleanupCounts } | { ran: false; reason: "locked" };

/**
 * One cleanup as of `now`. On PostgreSQL it first tries the advisory lock inside its transaction:
 * when another instance holds it, this run skips (`ran: false`) rather than waiting, since that
 * run deletes the same rows. SQLite is one file served by one instance.
 */
export async function runCleanup(now = new Date(), { batch = CLEANUP_BATCH } = {}): Promise<CleanupResult> {
  const config = getConfig();
  const eventsBefore = new Date(now.getTime() - config.authEventRetentionDays * DAY_MS);
  const postgres = dbProvider() === "postgres";
  /** Expired sessions found not revoked, by strategy: reported once the transaction committed. */
  const expired = new Map<string, number>();
  const result: CleanupResult = await db().$transaction(
    async (tx) => {
      if (postgres) {
        const [row] = await tx.$queryRawUnsafe<{ locked: boolean }[]>("SELECT pg_try_advisory_xact_lock($1) AS locked", PG_CLEANUP_LOCK_KEY);
        if (!row?.locked) return { ran: false, reason: "locked" } as const;
      }
      const sessions = await inBatches(
        batch,
        async (take) => {
          const rows = await tx.session.findMany({ where: { expires: { lte: now } }, select: { id: true, kind: true, revokedAt: true }, take });
          // A revoked row was counted as ended when it was revoked; the rest ran out their time.
          for (const r of rows) if (r.revokedAt === null) expired.set(r.kind, (expired.get(r.kind) ?? 0) + 1);
          return rows.map((r) => r.id);
        },
        (ids) => tx.session.deleteMany({ where: { id: { in: ids } } }),
      );
      const sessionCutoffs = await inBatches(
        batch,
        async (take) => (await tx.sessionCutoff.findMany({ where: { expires: { lte: now } }, select: { userId: true }, take })).map((r) => r.userId),
        (userIds) => tx.sessionCutoff.deleteMany({ where: { userId: { in: userIds } } }),
      ) +
      // A re-authentication's cut-off (ADR 103), counted with the others.
      (await inBatches(
        batch,
        async (take) => (await tx.sessionOrphanCutoff.findMany({ where: { expires: { lte: now } }, select: { userId: true }, take })).map((r) => r.userId),
        (userIds) => tx.sessionOrphanCutoff.deleteMany({ where: { userId: { in: userIds } } }),
      ));
      // No single-column key: links are few (one per request, a day at most) and go in one statement.
      const verificationTokens = (await tx.verificationToken.deleteMany({ where: { expires: { lte: now } } })).count;
      const limitCounters = await inBatches(
        batch,
        async (take) => (await tx.limitCounter.findMany({ where: { expire: { lte: now } }, select: { key: true }, take })).map((r) => r.key),
        (keys) => tx.limitCounter.deleteMany({ where: { key: { in: keys } } }),
      );
      const authEvents = await inBatches(
        batch,
        async (take) => (await tx.authEvent.findMany({ where: { at: { lt: eventsBefore } }, select: { id: true }, take })).map((r) => r.id),
        (ids) => tx.authEvent.deleteMany({ where: { id: { in: ids } } }),
      );
      // Answered WebAuthn challenges are kept only while their sealed cookie could still be replayed.
      const passkeyChallenges = await inBatches(
        batch,
        async (take) =>
          (await tx.passkeyChallenge.findMany({ where: { expires: { lte: now } }, select: { challengeHash: true }, take })).map((r) => r.challengeHash),
        (hashes) => tx.passkeyChallenge.deleteMany({ where: { challengeHash: { in: hashes } } }),
      );
      // A database session's revocation note is needed only while a cached copy could outlive it.
      const sessionRevocations = await inBatches(
        batch,
        async (take) => (await tx.sessionRevocation.findMany({ where: { expires: { lte: now } }, select: { sessionId: true }, take })).map((r) => r.sessionId),
        (ids) => tx.sessionRevocation.deleteMany({ where: { sessionId: { in: ids } } }),
      );
      // SAML (ADR 154): AuthnRequests never answered, and assertion ids past their assertion's end
      // (a replay of one would be refused by its times anyway).
      const samlRows =
        (await tx.samlRequest.deleteMany({ where: { expires: { lte: now } } })).count +
        (await tx.samlAssertionUse.deleteMany({ where: { expires: { lte: now } } })).count +
        (await tx.samlTicket.deleteMany({ where: { expires: { lte: now } } })).count;
      // The mail queue (ADR 059): sent messages after a week; one never sent after a month of retries.
      const sentBefore = new Date(now.getTime() - SENT_MAIL_KEPT_DAYS * DAY_MS);
      const unsentBefore = new Date(now.getTime() - UNSENT_MAIL_KEPT_DAYS * DAY_MS);
      const mailQueue = await inBatches(
        batch,
        async (take) =>
          (
            await tx.mailQueue.findMany({
              where: { OR: [{ sentAt: { lte: sentBefore } }, { sentAt: null, createdAt: { lte: unsentBefore } }] },
              select: { id: true },
              take,
            })
          ).map((r) => r.id),
        (ids) => tx.mailQueue.deleteMany({ where: { id: { in: ids } } }),
      );
      // The OAuth provider's rows (ADR 131): each kind carries its own expiry; a consumed refresh
      // token is kept until then, so a reuse is still recognised.
      const oauthPayloads = (await tx.oAuthPayload.deleteMany({ where: { expiresAt: { lte: now } } })).count;
      // Its signing keys a rotation replaced, once no token they signed can still be valid (ADR 130).
      const oauthSigningKeys = (await tx.oAuthSigningKey.deleteMany({ where: { publishedUntil: { lte: now } } })).count;
      // Registrations anyone may make (ADR 132): one no user has a grant for, 30 days on, goes.
      const registeredBefore = new Date(now.getTime() - OAUTH_UNUSED_REGISTRATION_DAYS * DAY_MS);
      const stale = await tx.oAuthClient.findMany({ where: { source: "registration", createdAt: { lt: registeredBefore } }, select: { clientId: true } });
      const granted = new Set(
        stale.length
          ? (await tx.oAuthPayload.findMany({ where: { kind: "Grant", clientId: { in: stale.map((c) => c.clientId) } }, select: { clientId: true } })).map((g) => g.clientId)
          : [],
      );
      const unused = stale.map((c) => c.clientId).filter((id) => !granted.has(id));
      const oauthRegistrations = unused.length ? (await tx.oAuthClient.deleteMany({ where: { clientId: { in: unused } } })).count : 0;
      // Back-channel logouts (ADR 145): sent or given up a week ago; never either after a month
      // (a retry outlives no such span). And records of apps in sessions that outlived their bound.
      const logoutsBefore = new Date(now.getTime() - SENT_MAIL_KEPT_DAYS * DAY_MS);
      const abandonedBefore = new Date(now.getTime() - UNSENT_MAIL_KEPT_DAYS * DAY_MS);
      const backchannelLogouts = await inBatches(
        batch,
        async (take) =>
          (
            await tx.backchannelLogout.findMany({
              where: { OR: [{ sentAt: { lte: logoutsBefore } }, { givenUpAt: { lte: logoutsBefore } }, { createdAt: { lte: abandonedBefore } }] },
              select: { id: true },
              take,
            })
          ).map((r) => r.id),
        (ids) => tx.backchannelLogout.deleteMany({ where: { id: { in: ids } } }),
      );
      const oauthSessionApps = (await tx.oAuthSessionApp.deleteMany({ where: { expiresAt: { lte: now } } })).count;
      return {
        ran: true,
        counts: { sessions, sessionCutoffs, verificationTokens, limitCounters, authEvents, passkeyChallenges, sessionRevocations, mailQueue, oauthPayloads, oauthSigningKeys, oauthRegistrations, backchannelLogouts, oauthSessionApps, samlRows },
      } as const;
    },
    { maxWait: config.databaseTimeoutMs, timeout: CLEANUP_TRANSACTION_MS },
  );
  if (result.ran) for (const [strategy, count] of expired) countEvent("sessions-expired", { count, strategy });
  return result;
}

/** A run that never throws: what it did, or why not, goes to the log. */
export async function runCleanupLogged(): Promise<CleanupResult | null> {
  const started = performance.now();
  try {
    const result = await runCleanup();
    const durationMs = Math.round(performance.now() - started);
    if (result.ran) log("info", "cleanup-complete", { ...result.counts, durationMs });
    else log("info", "cleanup-skipped", { reason: "another instance is cleaning up" });
    return result;
  } catch (error) {
    log("warn", "cleanup-failed", { error });
    return null;
  }
}

/**
 * The server's hourly run: first after `firstDelayMs` plus up to a minute of jitter (instances
 * started together do not all ask at once), then every `everyMs`. The timers are unref'd: they
 * never keep a stopping process alive. Returns a function that stops them.
 */
export function scheduleCleanup({
  firstDelayMs = CLEANUP_FIRST_DELAY_MS,
  everyMs = CLEANUP_EVERY_MS,
  jitterMs = 60_000,
  also = [] as readonly (() => Promise<void>)[],
} = {}): () => void {
  let interval: ReturnType<typeof setInterval> | undefined;
  // `also`: periodic work of the layers above the core (the daily domain check, ADR 149), each
  // run after the cleanup, never throwing (each logs its own failures).
  const run = () => void runCleanupLogged().then(() => Promise.all(also.map((task) => task())));
  const first = setTimeout(() => {
    run();
    interval = setInterval(run, everyMs);
    interval.unref();
  }, firstDelayMs + Math.floor(Math.random() * jitterMs));
  first.unref();
  return () => {
    clearTimeout(first);
    if (interval) clearInterval(interval);
  };
}
