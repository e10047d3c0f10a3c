// Ended sessions (ADR 036). A stateless cookie cannot be deleted, so each
// process keeps the list of what is refused in memory — revoked session ids, per user a "not
// before" time (ms) for cookies issued up to it, and per user a re-authentication's cut-off for
// the cookies up to it that name no live session row (ADR 103) — and refreshes it from the database every
// REVOCATION_POLL_MS. Ended database sessions are on the list too (their SessionRevocation
// notes): a process may hold a copy of a database session for a few seconds
// (session-cache.server.ts, ADR 056), and the list is what drops it everywhere within the bound. Reading a session checks a Set and a Map, never the database. When the
// database cannot be reached the last list stays in force, and the outage is logged once. The list
// is bounded (REVOCATION_MAX_ENTRIES, ADR 064): past it the process drops the list and every
// session read asks the database until the revocations in force fit again — never one forgotten.
// On PostgreSQL what one instance ends reaches the others at once by NOTIFY (ADR 067); the poll
// stays as the fallback and re-reads what a listener that was not connected missed.
import { db } from "../../db/client.server";
import { publish, subscribe, type Subscription } from "../../db/listen.server";
import { log } from "./log.server";
import { outsideRequest } from "./request-context.server";

/** How often each process asks the database for new revocations; the bound is this plus one query. */
export const REVOCATION_POLL_MS = 2_000;
/**
 * Each poll asks for rows written since the previous poll began, minus this margin: it covers
 * writers whose clock is behind ours and transactions that committed after a poll they predate.
 * Rows seen twice are simply added twice.
 */
const POLL_OVERLAP_MS = 60_000;
/**
 * Entries (ended sessions plus users' cut-offs) one process keeps at most (ADR 064): enough for
 * every revocation in force on a large site, small enough for the memory budget of ADR 057 (about
 * 150 bytes each). Past it the list is dropped and the process asks the database instead.
 */
export const REVOCATION_MAX_ENTRIES = 50_000;

type State = {
  /** sid → when its cookie expires at the latest (ms); pruned after. */
  revoked: Map<string, number>;
  /**
   * userId → cookies issued at or before this moment (ms) are refused; with when the entry may go
   * (ms). Milliseconds, not the `iat` second: a cookie stolen in the same second as a "sign out
   * everywhere" must not outlive it.
   */
  cutoffs: Map<string, { notBefore: number; expires: number }>;
  /**
   * userId → a re-authentication's cut-off (ADR 103): cookies issued at or before `notBefore` that
   * name no live session row are refused. `live`: the sids under it found to have a live row (each
   * asked of the database once per process; one found without is put on `revoked`).
   */
  orphans: Map<string, { notBefore: number; expires: number; live: Set<string> }>;
  /**
   * Every user's cut-off at once ("end every session", GlobalSessionCutoff, ADR 107): cookies of
   * anyone issued at or before `notBefore` (ms) are refused. One value, outside the cap.
   */
  everyone: { notBefore: number; expires: number } | null;
  /** Start of the last successful poll (ms); null until the first full load. */
  since: number | null;
  loading: Promise<void> | null;
  timer: ReturnType<typeof setInterval> | null;
  outage: boolean;
  /** The LISTEN on REVOCATION_CHANNEL (PostgreSQL), started with the poll. */
  listener: Subscription | null;
  /**
   * False once the revocations in force outgrew `maxEntries`: the list is then empty and no
   * answer of it can be trusted, so every session read asks the database (revocationsComplete),
   * until a poll finds that they fit again.
   */
  complete: boolean;
  maxEntries: number;
};

const STATE = Symbol.for("vestibule.revocations");
const holder = globalThis as typeof globalThis & { [STATE]?: State };

function freshState(maxEntries = REVOCATION_MAX_ENTRIES): State {
  return { revoked: new Map(), cutoffs: new Map(), orphans: new Map(), everyone: null, since: null, loading: null, timer: null, outage: false, listener: null, complete: true, maxEntries };
}

function state(): State {
  holder[STATE] ??= freshState();
  return holder[STATE];
}

const entries = (s: State) => s.revoked.size + s.cutoffs.size + s.orphans.size;

/**
 * The cap is reached: forget the whole list rather than any one revocation. An incomplete list
 * refuses nothing by itself, so every reader asks the database from now on (fail safe).
 */
function overflow(s: State) {
  if (!s.complete) return;
  log("warn", "session-revocations-over-cap", { maxEntries: s.maxEntries, message: "Too many revocations in force to keep in memory: every session read asks the database" });
  s.complete = false;
  s.revoked.clear();
  s.cutoffs.clear();
  s.orphans.clear();
}

/** Room for one more entry under `key` of `map`? Overflows (and says no) when there is none. */
function room(s: State, map: Map<string, unknown>, key: string): boolean {
  if (!s.complete) return false;
  if (map.has(key) || entries(s) < s.maxEntries) return true;
  overflow(s);
  return false;
}

function addRevoked(s: State, sid: string, expires: number) {
  if (!room(s, s.revoked, sid)) return;
  s.revoked.set(sid, Math.max(s.revoked.get(sid) ?? 0, expires));
}

function setEveryoneCutoff(s: State, notBefore: number, expires: number) {
  if (!s.everyone || s.everyone.notBefore < notBefore) s.everyone = { notBefore, expires: Math.max(expires, s.everyone?.expires ?? 0) };
}

/** The id of GlobalSessionCutoff's one row. */
export const EVERYONE_CUTOFF_ID = "all";

function addCutoff(s: State, userId: string, notBefore: number, expires: number) {
  if (!room(s, s.cutoffs, userId)) return;
  const held = s.cutoffs.get(userId);
  if (!held || held.notBefore < notBefore) s.cutoffs.set(userId, { notBefore, expires: Math.max(expires, held?.expires ?? 0) });
}

function addOrphanCutoff(s: State, userId: string, notBefore: number, expires: number) {
  if (!room(s, s.orphans, userId)) return;
  const held = s.orphans.get(userId);
  // A later cut-off refuses more: the sids found live under the earlier one are asked again.
  if (!held || held.notBefore < notBefore) s.orphans.set(userId, { notBefore, expires: Math.max(expires, held?.expires ?? 0), live: new Set() });
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
    // A full load (the first, or one after the cap was hit) is counted first, so that not even
    // the rows of a list over the cap are read into memory.
    if ((s.since === null || !s.complete) && !(await fitsInMemory(s, now))) {
      overflow(s);
      s.since = started;
      noteRestored(s);
      return true;
    }
    const changed = s.since === null ? null : new Date(s.since - POLL_OVERLAP_MS);
    const [sessions, cutoffs, ended, orphans, everyone] = await Promise.all([
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
      client.sessionOrphanCutoff.findMany({
        where: changed ? { notBefore: { gte: changed } } : { expires: { gt: now } },
        select: { userId: true, notBefore: true, expires: true },
      }),
      // One row by its key on every poll: it is read whole, whatever was written since.
      client.globalSessionCutoff.findUnique({ where: { id: EVERYONE_CUTOFF_ID }, select: { notBefore: true, expires: true } }),
    ]);
    if (everyone && everyone.expires.getTime() > started) setEveryoneCutoff(s, everyone.notBefore.getTime(), everyone.expires.getTime());
    for (const r of ended) addRevoked(s, r.sessionId, r.expires.getTime());
    for (const r of sessions) addRevoked(s, r.id, r.expires.getTime());
    for (const c of cutoffs) addCutoff(s, c.userId, c.notBefore.getTime(), c.expires.getTime());
    for (const c of orphans) addOrphanCutoff(s, c.userId, c.notBefore.getTime(), c.expires.getTime());
    for (const [sid, expires] of s.revoked) if (expires <= started) s.revoked.delete(sid);
    for (const [userId, c] of s.cutoffs) if (c.expires <= started) s.cutoffs.delete(userId);
    for (const [userId, c] of s.orphans) if (c.expires <= started) s.orphans.delete(userId);
    if (s.everyone && s.everyone.expires <= started) s.everyone = null;
    s.since = s.since === null ? started : Math.max(s.since, started);
    noteRestored(s);
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

function noteRestored(s: State) {
  if (!s.outage) return;
  s.outage = false;
  log("info", "session-revocations-restored", { revokedSessions: s.revoked.size, cutoffs: s.cutoffs.size, complete: s.complete });
}

/**
 * Before a full load: whether the revocations in force fit under the cap (three counts, no rows
 * read). If so the list is complete and the poll loads it whole (`since` null); else it stays
 * empty and the readers keep asking the database.
 */
async function fitsInMemory(s: State, now: Date): Promise<boolean> {
  const client = db();
  const counts = await Promise.all([
    client.session.count({ where: { revokedAt: { not: null }, expires: { gt: now } } }),
    client.sessionCutoff.count({ where: { expires: { gt: now } } }),
    client.sessionRevocation.count({ where: { expires: { gt: now } } }),
    client.sessionOrphanCutoff.count({ where: { expires: { gt: now } } }),
  ]);
  if (counts.reduce((a, b) => a + b, 0) > s.maxEntries) return false;
  if (!s.complete) log("info", "session-revocations-in-memory-again", { maxEntries: s.maxEntries });
  s.complete = true;
  s.since = null;
  return true;
}

/**
 * Whether the list in memory holds every revocation in force. When it does not (ADR 064: past the
 * cap), isRevoked and isSessionRevoked cannot clear a session, and the reader asks the database
 * (endedInDatabase with failClosed, or the session's row).
 */
export function revocationsComplete(): boolean {
  return state().complete;
}

/** What the list holds now: its entries and whether it is complete (tests, health). */
export function revocationListState(): { entries: number; complete: boolean } {
  const s = state();
  return { entries: entries(s), complete: s.complete };
}

/**
 * Resolves once this process has loaded the list at least once (or tried to), and keeps the
 * poll running. The first session read of a process waits for it; every later one does not.
 */
export function revocationsReady(): Promise<void> | null {
  const s = state();
  if (!s.timer) {
    // Started by whichever request reads a session first, and lives on after it: outside its
    // context, so that the poll's and the listener's log lines carry no request id (ADR 106).
    outsideRequest(() => {
      s.timer = setInterval(() => void refreshRevocations(), REVOCATION_POLL_MS);
      s.timer.unref();
      s.listener = listenForRevocations();
    });
  }
  if (s.since !== null || s.outage) return null;
  // The first load too: the request waits for it, but its lines (a failure) are the list's own.
  s.loading ??= outsideRequest(() => refreshRevocations()).then(() => {
    state().loading = null;
  });
  return s.loading;
}

/** Whether the session with this id (a jwt sid or a database row id) has been ended. */
export function isSessionRevoked(id: string): boolean {
  return state().revoked.has(id);
}

/**
 * Whether a cookie issued at `issuedAtMs` is ended by a cut-off at `notBeforeMs`: every cookie
 * issued up to and including the cut-off's own moment is.
 */
const cutOff = (issuedAtMs: number, notBeforeMs: number) => issuedAtMs <= notBeforeMs;

/**
 * Whether the jwt cookie (its sid, user and issue time in milliseconds) has been ended.
 * `cutoff: false` asks about its sid alone: for the one session a "sign out everywhere else" kept,
 * whose cookie predates the cut-off that same request wrote.
 */
export function isRevoked(sid: string | null, userId: string, issuedAtMs: number, { cutoff: applyCutoff = true } = {}): boolean {
  const s = state();
  if (sid !== null && s.revoked.has(sid)) return true;
  // "End every session" spares no cookie, a kept one included: it was issued before it too.
  if (s.everyone && cutOff(issuedAtMs, s.everyone.notBefore)) return true;
  if (!applyCutoff && sid !== null) return false;
  const cutoff = s.cutoffs.get(userId);
  return cutoff !== undefined && cutOff(issuedAtMs, cutoff.notBefore);
}

/**
 * The user's cut-off this process knows (ms), or null. A cookie minted here is issued after it
 * (session.server.ts): the one a "sign out everywhere else" keeps is re-issued in the same
 * millisecond the cut-off was written, and must not fall under it.
 */
export function knownCutoff(userId: string): number | null {
  const s = state();
  const times = [s.cutoffs.get(userId)?.notBefore, s.orphans.get(userId)?.notBefore, s.everyone?.notBefore].filter((t): t is number => t !== undefined);
  return times.length ? Math.max(...times) : null;
}

/**
 * Whether the jwt cookie falls under its user's re-authentication cut-off (ADR 103): issued up to
 * it, and naming no live session row — no sid, or a sid whose row is gone. A sid under the cut-off
 * is asked of the database once per process and remembered (live, or put on the revoked list);
 * a database that cannot answer refuses it this time. Call after isRevoked passed.
 */
export async function isOrphaned(sid: string | null, userId: string, issuedAtMs: number): Promise<boolean> {
  const s = state();
  const cutoff = s.orphans.get(userId);
  if (!cutoff || !cutOff(issuedAtMs, cutoff.notBefore)) return false;
  if (sid === null) return true;
  if (cutoff.live.has(sid)) return false;
  try {
    const row = await db().session.findFirst({ where: { id: sid, userId, kind: "jwt" }, select: { revokedAt: true, expires: true } });
    if (row && !row.revokedAt) {
      cutoff.live.add(sid);
      return false;
    }
    addRevoked(s, sid, Math.max(cutoff.expires, row?.expires.getTime() ?? 0));
    return true;
  } catch (error) {
    log("error", "session-revocation-check-failed", { error });
    return true;
  }
}

/**
 * Whether the database already says this cookie has ended (or its user is disabled), for the moments a cookie is about to be
 * issued again (a roll, at most once a day per session; a profile update) — never per request.
 * Re-issued, a cookie carries a fresh issue time, past every cut-off, so a cookie without a sid
 * re-issued in the seconds before this process's next poll would outlive the "sign out
 * everywhere" that another instance just wrote. What is found is noted here at once. When the
 * database cannot say, the list in memory decides (as between polls), or with `failClosed` (the
 * list is incomplete and cannot decide) the cookie counts as ended. `cutoff: false` as in
 * isRevoked.
 */
export async function endedInDatabase(
  sid: string | null,
  userId: string,
  issuedAtMs: number,
  { cutoff: applyCutoff = true, failClosed = false } = {},
): Promise<boolean> {
  try {
    const client = db();
    const [row, cutoff, orphans, user, everyone] = await Promise.all([
      sid === null ? null : client.session.findUnique({ where: { id: sid }, select: { revokedAt: true, expires: true } }),
      applyCutoff ? client.sessionCutoff.findUnique({ where: { userId }, select: { notBefore: true, expires: true } }) : null,
      applyCutoff ? client.sessionOrphanCutoff.findUnique({ where: { userId }, select: { notBefore: true, expires: true } }) : null,
      client.user.findUnique({ where: { id: userId }, select: { disabledAt: true } }),
      client.globalSessionCutoff.findUnique({ where: { id: EVERYONE_CUTOFF_ID }, select: { notBefore: true, expires: true } }),
    ]);
    // A disabled user's cookie is never issued again, whatever the list says (ADR 078); nor a
    // deleted user's (ADR 086: a cookie minted without a sid has no revocation note to find).
    if (!user || user.disabledAt) return true;
    if (sid !== null && row?.revokedAt) {
      noteRevoked([{ id: sid, expires: row.expires }]);
      return true;
    }
    if (everyone && cutOff(issuedAtMs, everyone.notBefore.getTime())) {
      setEveryoneCutoff(state(), everyone.notBefore.getTime(), everyone.expires.getTime());
      return true;
    }
    if (cutoff && cutOff(issuedAtMs, cutoff.notBefore.getTime())) {
      noteRevoked([], { userId, notBefore: cutoff.notBefore, expires: cutoff.expires });
      return true;
    }
    // A re-authentication's cut-off (ADR 103): a cookie from before it that names no live row.
    if (orphans && cutOff(issuedAtMs, orphans.notBefore.getTime()) && (sid === null || !row)) {
      noteOrphanCutoff({ userId, notBefore: orphans.notBefore, expires: orphans.expires });
      return true;
    }
    return false;
  } catch (error) {
    log("error", "session-revocation-check-failed", { error });
    return failClosed;
  }
}

/** What this process wrote itself takes effect here at once, without waiting for the poll. */
export function noteRevoked(sids: readonly { id: string; expires: Date }[], cutoff?: { userId: string; notBefore: Date; expires: Date }) {
  const s = state();
  for (const r of sids) addRevoked(s, r.id, r.expires.getTime());
  if (cutoff) addCutoff(s, cutoff.userId, cutoff.notBefore.getTime(), cutoff.expires.getTime());
}

/** A re-authentication's cut-off (ADR 103) this process wrote or found: in force here at once. */
function noteOrphanCutoff(cutoff: { userId: string; notBefore: Date; expires: Date }) {
  addOrphanCutoff(state(), cutoff.userId, cutoff.notBefore.getTime(), cutoff.expires.getTime());
}

/**
 * A re-authentication's cut-off written by this process (ADR 103): in force here at once and
 * announced to every other instance, as revokedHere does.
 */
export function orphansCutOffHere(cutoff: { userId: string; notBefore: Date; expires: Date }) {
  noteOrphanCutoff(cutoff);
  const message: RevocationMessage = { v: 1, kind: "orphan-cutoff", userId: cutoff.userId, notBefore: cutoff.notBefore.getTime(), expires: cutoff.expires.getTime() };
  publish(REVOCATION_CHANNEL, JSON.stringify(message)).catch((error: unknown) => log("warn", "session-revocation-notify-failed", { error }));
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

/**
 * Every session ended by this process ("end every session", ADR 107): every cookie issued up to
 * `notBefore` is refused here at once and, by a `cutoff-all` notification, on every other
 * instance (their poll reads GlobalSessionCutoff within REVOCATION_POLL_MS if it is lost).
 */
export function everyoneCutHere(cutoff: { notBefore: Date; expires: Date }) {
  setEveryoneCutoff(state(), cutoff.notBefore.getTime(), cutoff.expires.getTime());
  const message: RevocationMessage = { v: 1, kind: "cutoff-all", notBefore: cutoff.notBefore.getTime(), expires: cutoff.expires.getTime() };
  publish(REVOCATION_CHANNEL, JSON.stringify(message)).catch((error: unknown) => log("warn", "session-revocation-notify-failed", { error }));
}

// ---- LISTEN/NOTIFY (ADR 067) -------------------------------------------------------------------

/** The PostgreSQL channel every instance listens on. */
export const REVOCATION_CHANNEL = "vestibule_revocations";
/** Session ids per notification: keeps each payload well under PostgreSQL's 8 000 bytes. */
const IDS_PER_MESSAGE = 100;

/**
 * What a notification carries (JSON, `v` 1). `sessions` and `cutoff` are applied as they arrive,
 * without a query. `user-disabled` and `user-deleted` are reserved for account administration:
 * whoever sends them writes what the poll reads first, so today any other kind,
 * version or shape makes the receiver re-read the database at once instead.
 */
export type RevocationMessage =
  | { v: 1; kind: "sessions"; sessions: { id: string; expires: number }[] }
  | { v: 1; kind: "cutoff"; userId: string; notBefore: number; expires: number }
  /** A re-authentication's cut-off (ADR 103): the user's cookies up to notBefore naming no live row. */
  | { v: 1; kind: "orphan-cutoff"; userId: string; notBefore: number; expires: number }
  | { v: 1; kind: "cutoff-all"; notBefore: number; expires: number }
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
    if ((m.kind === "cutoff" || m.kind === "orphan-cutoff") && typeof m.userId === "string" && Number.isFinite(m.notBefore) && Number.isFinite(m.expires)) {
      return { v: 1, kind: m.kind, userId: m.userId, notBefore: m.notBefore as number, expires: m.expires as number };
    }
    if (m.kind === "cutoff-all" && Number.isFinite(m.notBefore) && Number.isFinite(m.expires)) {
      return { v: 1, kind: "cutoff-all", notBefore: m.notBefore as number, expires: m.expires as number };
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
    addCutoff(state(), m.userId, m.notBefore, m.expires);
  } else if (m?.kind === "orphan-cutoff") {
    addOrphanCutoff(state(), m.userId, m.notBefore, m.expires);
  } else if (m?.kind === "cutoff-all") {
    setEveryoneCutoff(state(), m.notBefore, m.expires);
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
 * A user was just disabled (ADR 078) or deleted (ADR 086): their sessions were ended (the rows and
 * notes are written, and announced as `sessions`/`cutoff`); this tells every instance to re-read
 * the database at once as well, the kinds reserved for it. Never throws.
 */
export function announceUserEnded(kind: "user-disabled" | "user-deleted", userId: string) {
  const message: RevocationMessage = { v: 1, kind, userId };
  publish(REVOCATION_CHANNEL, JSON.stringify(message)).catch((error: unknown) => log("warn", "session-revocation-notify-failed", { error }));
}

export function announceUserDisabled(userId: string) {
  announceUserEnded("user-disabled", userId);
}

/** Tests: forget the list and stop the poll and the listener, as a fresh process would start (with this cap). */
export function resetRevocations({ maxEntries = REVOCATION_MAX_ENTRIES } = {}) {
  const s = holder[STATE];
  if (s?.timer) clearInterval(s.timer);
  void s?.listener?.stop();
  holder[STATE] = maxEntries === REVOCATION_MAX_ENTRIES ? undefined : freshState(maxEntries);
}
