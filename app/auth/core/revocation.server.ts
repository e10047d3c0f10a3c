// Ended sessions (contract section 11, ADR 036). A stateless cookie cannot be deleted, so each
// process keeps the list of what is refused in memory — revoked session ids, and per user a "not
// before" time for cookies issued earlier — and refreshes it from the database every
// REVOCATION_POLL_MS. Ended database sessions are on the list too (their SessionRevocation
// notes): a process may hold a copy of a database session for a few seconds
// (session-cache.server.ts, ADR 056), and the list is what drops it everywhere within the bound. Reading a session checks a Set and a Map, never the database. When the
// database cannot be reached the last list stays in force, and the outage is logged once.
// On PostgreSQL what one instance ends reaches the others at once by NOTIFY (ADR 067); the poll
// stays as the fallback and re-reads what a listener that was not connected missed.
import { db } from "../../db/client.server";
import { publish, subscribe, type Subscription } from "../../db/listen.server";
import { log } from "./log.server";

/** How often each process asks the database for new revocations; the bound is this plus one query. */
export const REVOCATION_POLL_MS = 2_000;
/**
 * Each poll asks for rows written since the previous poll began, minus this margin: it covers
 * writers whose clock is behind ours and transactions that committed after a poll they predate.
 * Rows seen twice are simply added twice.
 */
const POLL_OVERLAP_MS = 60_000;

type State = {
  /** sid → when its cookie expires at the latest (ms); pruned after. */
  revoked: Map<string, number>;
  /** userId → cookies issued (iat) before this (s) are refused; with when the entry may go (ms). */
  cutoffs: Map<string, { notBefore: number; expires: number }>;
  /** Start of the last successful poll (ms); null until the first full load. */
  since: number | null;
  loading: Promise<void> | null;
  timer: ReturnType<typeof setInterval> | null;
  outage: boolean;
  /** The LISTEN on REVOCATION_CHANNEL (PostgreSQL), started with the poll. */
  listener: Subscription | null;
};

const STATE = Symbol.for("vestibule.revocations");
const holder = globalThis as typeof globalThis & { [STATE]?: State };

function state(): State {
  holder[STATE] ??= { revoked: new Map(), cutoffs: new Map(), since: null, loading: null, timer: null, outage: false, listener: null };
  return holder[STATE];
}

function addRevoked(s: State, sid: string, expires: number) {
  s.revoked.set(sid, Math.max(s.revoked.get(sid) ?? 0, expires));
}

function addCutoff(s: State, userId: string, notBefore: number, expires: number) {
  const held = s.cutoffs.get(userId);
  if (!held || held.notBefore < notBefore) s.cutoffs.set(userId, { notBefore, expires: Math.max(expires, held?.expires ?? 0) });
}

/**
 * One poll: the first loads every revocation still in force, later ones only rows written since
 * the previous poll (an indexed range on Session.revokedAt and SessionCutoff.notBefore). Exported
 * so tests drive it deterministically; the timer calls it too. Never throws.
 */
export async function refreshRevocations(now = new Date()): Promise<boolean> {
  const s = state();
  const started = now.getTime();
  try {
    const client = db();
    const changed = s.since === null ? null : new Date(s.since - POLL_OVERLAP_MS);
    const [sessions, cutoffs, ended] = await Promise.all([
      client.session.findMany({
        where: changed ? { revokedAt: { gte: changed } } : { revokedAt: { not: null }, expires: { gt: now } },
        select: { id: true, expires: true },
      }),
      client.sessionCutoff.findMany({
        where: changed ? { notBefore: { gte: changed } } : { expires: { gt: now } },
        select: { userId: true, notBefore: true, expires: true },
      }),
      client.sessionRevocation.findMany({
        where: changed ? { revokedAt: { gte: changed } } : { expires: { gt: now } },
        select: { sessionId: true, expires: true },
      }),
    ]);
    for (const r of ended) addRevoked(s, r.sessionId, r.expires.getTime());
    for (const r of sessions) addRevoked(s, r.id, r.expires.getTime());
    for (const c of cutoffs) addCutoff(s, c.userId, Math.floor(c.notBefore.getTime() / 1000), c.expires.getTime());
    for (const [sid, expires] of s.revoked) if (expires <= started) s.revoked.delete(sid);
    for (const [userId, c] of s.cutoffs) if (c.expires <= started) s.cutoffs.delete(userId);
    s.since = s.since === null ? started : Math.max(s.since, started);
    if (s.outage) {
      s.outage = false;
      log("info", "session-revocations-restored", { revokedSessions: s.revoked.size, cutoffs: s.cutoffs.size });
    }
    return true;
  } catch (error) {
    // The list in memory stays in force; one line per outage, not one per poll.
    if (!s.outage) {
      s.outage = true;
      log("error", "session-revocations-stale", { error, revokedSessions: s.revoked.size, cutoffs: s.cutoffs.size });
    }
    return false;
  }
}

/**
 * Resolves once this process has loaded the list at least once (or tried to), and keeps the
 * poll running. The first session read of a process waits for it; every later one does not.
 */
export function revocationsReady(): Promise<void> | null {
  const s = state();
  if (!s.timer) {
    s.timer = setInterval(() => void refreshRevocations(), REVOCATION_POLL_MS);
    s.timer.unref();
    s.listener = listenForRevocations();
  }
  if (s.since !== null || s.outage) return null;
  s.loading ??= refreshRevocations().then(() => {
    state().loading = null;
  });
  return s.loading;
}

/** Whether the session with this id (a jwt sid or a database row id) has been ended. */
export function isSessionRevoked(id: string): boolean {
  return state().revoked.has(id);
}

/**
 * Whether the jwt cookie (its sid, user and issue time in seconds) has been ended. `cutoff: false`
 * asks about its sid alone: for the one session a "sign out everywhere else" kept, whose cookie
 * predates the cut-off that same request wrote.
 */
export function isRevoked(sid: string | null, userId: string, issuedAt: number, { cutoff: applyCutoff = true } = {}): boolean {
  const s = state();
  if (sid !== null && s.revoked.has(sid)) return true;
  if (!applyCutoff && sid !== null) return false;
  const cutoff = s.cutoffs.get(userId);
  return cutoff !== undefined && issuedAt < cutoff.notBefore;
}

/**
 * Whether the database already says this cookie has ended (or its user is disabled), for the moments a cookie is about to be
 * issued again (a roll, at most once a day per session; a profile update) — never per request.
 * Re-issued, a cookie carries a fresh issue time, past every cut-off, so a cookie without a sid
 * re-issued in the seconds before this process's next poll would outlive the "sign out
 * everywhere" that another instance just wrote. What is found is noted here at once. When the
 * database cannot say, the list in memory decides (as between polls). `cutoff: false` as in
 * isRevoked.
 */
export async function endedInDatabase(sid: string | null, userId: string, issuedAt: number, { cutoff: applyCutoff = true } = {}): Promise<boolean> {
  try {
    const client = db();
    const [row, cutoff, user] = await Promise.all([
      sid === null ? null : client.session.findUnique({ where: { id: sid }, select: { revokedAt: true, expires: true } }),
      applyCutoff ? client.sessionCutoff.findUnique({ where: { userId }, select: { notBefore: true, expires: true } }) : null,
      client.user.findUnique({ where: { id: userId }, select: { disabledAt: true } }),
    ]);
    // A disabled user's cookie is never issued again, whatever the list says (ADR 078).
    if (user?.disabledAt) return true;
    if (sid !== null && row?.revokedAt) {
      noteRevoked([{ id: sid, expires: row.expires }]);
      return true;
    }
    if (cutoff && issuedAt < Math.floor(cutoff.notBefore.getTime() / 1000)) {
      noteRevoked([], { userId, notBefore: cutoff.notBefore, expires: cutoff.expires });
      return true;
    }
    return false;
  } catch (error) {
    log("error", "session-revocation-check-failed", { error });
    return false;
  }
}

/** What this process wrote itself takes effect here at once, without waiting for the poll. */
export function noteRevoked(sids: readonly { id: string; expires: Date }[], cutoff?: { userId: string; notBefore: Date; expires: Date }) {
  const s = state();
  for (const r of sids) addRevoked(s, r.id, r.expires.getTime());
  if (cutoff) addCutoff(s, cutoff.userId, Math.floor(cutoff.notBefore.getTime() / 1000), cutoff.expires.getTime());
}

/**
 * Ended by this process: refused here at once (noteRevoked) and announced to every other instance
 * (NOTIFY on PostgreSQL; nothing on SQLite). A lost announcement costs only time: the others'
 * poll finds the rows within REVOCATION_POLL_MS.
 */
export function revokedHere(sids: readonly { id: string; expires: Date }[], cutoff?: { userId: string; notBefore: Date; expires: Date }) {
  noteRevoked(sids, cutoff);
  const messages: RevocationMessage[] = [];
  for (let i = 0; i < sids.length; i += IDS_PER_MESSAGE) {
    messages.push({ v: 1, kind: "sessions", sessions: sids.slice(i, i + IDS_PER_MESSAGE).map((r) => ({ id: r.id, expires: r.expires.getTime() })) });
  }
  if (cutoff) messages.push({ v: 1, kind: "cutoff", userId: cutoff.userId, notBefore: cutoff.notBefore.getTime(), expires: cutoff.expires.getTime() });
  for (const message of messages) {
    publish(REVOCATION_CHANNEL, JSON.stringify(message)).catch((error: unknown) => log("warn", "session-revocation-notify-failed", { error }));
  }
}

// ---- LISTEN/NOTIFY (ADR 067) -------------------------------------------------------------------

/** The PostgreSQL channel every instance listens on. */
export const REVOCATION_CHANNEL = "vestibule_revocations";
/** Session ids per notification: keeps each payload well under PostgreSQL's 8 000 bytes. */
const IDS_PER_MESSAGE = 100;

/**
 * What a notification carries (JSON, `v` 1). `sessions` and `cutoff` are applied as they arrive,
 * without a query. `user-disabled` and `user-deleted` are reserved for account administration
 * (contract §18): whoever sends them writes what the poll reads first, so today any other kind,
 * version or shape makes the receiver re-read the database at once instead.
 */
export type RevocationMessage =
  | { v: 1; kind: "sessions"; sessions: { id: string; expires: number }[] }
  | { v: 1; kind: "cutoff"; userId: string; notBefore: number; expires: number }
  | { v: 1; kind: "user-disabled" | "user-deleted"; userId: string };

function parseMessage(payload: string): RevocationMessage | null {
  try {
    const m = JSON.parse(payload) as Partial<Record<string, unknown>> | null;
    if (!m || m.v !== 1) return null;
    if (m.kind === "sessions" && Array.isArray(m.sessions)) {
      const sessions = m.sessions.filter(
        (r): r is { id: string; expires: number } => typeof r?.id === "string" && Number.isFinite(r?.expires),
      );
      return sessions.length === m.sessions.length ? { v: 1, kind: "sessions", sessions } : null;
    }
    if (m.kind === "cutoff" && typeof m.userId === "string" && Number.isFinite(m.notBefore) && Number.isFinite(m.expires)) {
      return { v: 1, kind: "cutoff", userId: m.userId, notBefore: m.notBefore as number, expires: m.expires as number };
    }
    return null;
  } catch {
    return null;
  }
}

/** One re-read at a time; a request for another while one runs starts one more after it. */
let rereading: Promise<unknown> | null = null;
let rereadAgain = false;
function rereadSoon() {
  if (rereading) {
    rereadAgain = true;
    return;
  }
  rereading = refreshRevocations().finally(() => {
    rereading = null;
    if (rereadAgain) {
      rereadAgain = false;
      rereadSoon();
    }
  });
}

function applyMessage(payload: string) {
  const m = parseMessage(payload);
  if (m?.kind === "sessions") {
    const s = state();
    for (const r of m.sessions) addRevoked(s, r.id, r.expires);
  } else if (m?.kind === "cutoff") {
    addCutoff(state(), m.userId, Math.floor(m.notBefore / 1000), m.expires);
  } else {
    rereadSoon();
  }
}

function listenForRevocations(): Subscription | null {
  return subscribe(REVOCATION_CHANNEL, {
    onMessage: applyMessage,
    onConnected(reconnected) {
      // Notifications sent while no connection listened are gone: read what they said.
      if (reconnected) {
        log("info", "session-revocation-listener-restored", {});
        rereadSoon();
      }
    },
    onLost: (error) => log("warn", "session-revocation-listener-lost", { error, fallbackPollMs: REVOCATION_POLL_MS }),
  });
}

/**
 * A user was just disabled (ADR 078): their sessions were ended (revokeUserSessions wrote the rows
 * and the cut-off, and announced them); this tells every instance to re-read the database at once
 * as well, the kind contract §18 reserved for it. Never throws.
 */
export function announceUserDisabled(userId: string) {
  const message: RevocationMessage = { v: 1, kind: "user-disabled", userId };
  publish(REVOCATION_CHANNEL, JSON.stringify(message)).catch((error: unknown) => log("warn", "session-revocation-notify-failed", { error }));
}

/** Tests: forget the list and stop the poll and the listener, as a fresh process would start. */
export function resetRevocations() {
  const s = holder[STATE];
  if (s?.timer) clearInterval(s.timer);
  void s?.listener?.stop();
  holder[STATE] = undefined;
}
