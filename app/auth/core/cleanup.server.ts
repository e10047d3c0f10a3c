// Deleting what no longer counts (contract §12, docs/decisions/051): expired sessions of both
// kinds (a revoked row is kept until then: ADR 036), e-mail links past their expiry, rate-limit
// windows that ended, "sign out everywhere" cutoffs whose cookies have all expired, and audit
// events older than AUTH_EVENT_RETENTION_DAYS. Run by `npm run db:cleanup` and every hour by the
// server. One transaction: a run deletes everything it found or nothing.
import { db, dbProvider } from "../../db/client.server";
import { getConfig } from "./config.server";
import { log } from "./log.server";

/** The transaction-scoped advisory lock that lets one instance at a time clean up on PostgreSQL. */
export const PG_CLEANUP_LOCK_KEY = 72707370;
/** The server's first run comes this long after its start (plus up to a minute), then every hour. */
export const CLEANUP_FIRST_DELAY_MS = 5 * 60_000;
export const CLEANUP_EVERY_MS = 60 * 60_000;
/** The longest one run may take before its transaction is given up (and nothing is deleted). */
const CLEANUP_TRANSACTION_MS = 10 * 60_000;
const DAY_MS = 24 * 60 * 60_000;

export type CleanupCounts = {
  sessions: number;
  sessionCutoffs: number;
  verificationTokens: number;
  limitCounters: number;
  authEvents: number;
};
export type CleanupResult = { ran: true; counts: CleanupCounts } | { ran: false; reason: "locked" };

/**
 * One cleanup as of `now`. On PostgreSQL it first tries the advisory lock inside its transaction:
 * when another instance holds it, this run skips (`ran: false`) rather than waiting, since that
 * run deletes the same rows. SQLite is one file served by one instance.
 */
export async function runCleanup(now = new Date()): Promise<CleanupResult> {
  const config = getConfig();
  const eventsBefore = new Date(now.getTime() - config.authEventRetentionDays * DAY_MS);
  const postgres = dbProvider() === "postgres";
  return db().$transaction(
    async (tx) => {
      if (postgres) {
        const [row] = await tx.$queryRawUnsafe<{ locked: boolean }[]>("SELECT pg_try_advisory_xact_lock($1) AS locked", PG_CLEANUP_LOCK_KEY);
        if (!row?.locked) return { ran: false, reason: "locked" } as const;
      }
      const sessions = await tx.session.deleteMany({ where: { expires: { lte: now } } });
      const sessionCutoffs = await tx.sessionCutoff.deleteMany({ where: { expires: { lte: now } } });
      const verificationTokens = await tx.verificationToken.deleteMany({ where: { expires: { lte: now } } });
      const limitCounters = await tx.limitCounter.deleteMany({ where: { expire: { lte: now } } });
      const authEvents = await tx.authEvent.deleteMany({ where: { at: { lt: eventsBefore } } });
      return {
        ran: true,
        counts: {
          sessions: sessions.count,
          sessionCutoffs: sessionCutoffs.count,
          verificationTokens: verificationTokens.count,
          limitCounters: limitCounters.count,
          authEvents: authEvents.count,
        },
      } as const;
    },
    { maxWait: config.databaseTimeoutMs, timeout: CLEANUP_TRANSACTION_MS },
  );
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
export function scheduleCleanup({ firstDelayMs = CLEANUP_FIRST_DELAY_MS, everyMs = CLEANUP_EVERY_MS, jitterMs = 60_000 } = {}): () => void {
  let interval: ReturnType<typeof setInterval> | undefined;
  const first = setTimeout(() => {
    void runCleanupLogged();
    interval = setInterval(() => void runCleanupLogged(), everyMs);
    interval.unref();
  }, firstDelayMs + Math.floor(Math.random() * jitterMs));
  first.unref();
  return () => {
    clearTimeout(first);
    if (interval) clearInterval(interval);
  };
}
