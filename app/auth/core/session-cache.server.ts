// Database sessions read in the last few seconds, kept in this process so that a browser or
// client polling GET /auth/session does not cost a database round trip each time
// (docs/decisions/056-database-session-reads.md). What a copy may miss, and for how long:
// - an ended session: never past the revocation list's bound — every read of a copy checks the
//   list, which this process updates at once for what it ends itself and polls every 2 s for
//   what other instances end (revocation.server.ts); while that list is incomplete (past its cap,
//   ADR 064) no copy is used at all, every read is the row's;
// - a name, e-mail address or picture changed on another instance: at most SESSION_CACHE_TTL_MS
//   (this process forgets the user's copies when it changes them itself);
// - expiry and absolute max age: none — both are computed from the copy's times at each read,
//   and a roll writes through.
import type { SessionLookupRow } from "../../db/session-lookup.server";

/** How long a copy is used before the row is read again. */
export const SESSION_CACHE_TTL_MS = 5_000;
/** Copies kept at most; past it the oldest goes first (a Map iterates in insertion order). */
export const SESSION_CACHE_MAX_ENTRIES = 10_000;

type Entry = { row: SessionLookupRow; until: number };

const CACHE = Symbol.for("vestibule.session-cache");
const holder = globalThis as typeof globalThis & { [CACHE]?: Map<string, Entry> };

function entries(): Map<string, Entry> {
  holder[CACHE] ??= new Map();
  return holder[CACHE];
}

/** The copy of the session whose token hashes to `tokenHash`, while it is fresh. */
export function cachedSession(tokenHash: string, now: number): SessionLookupRow | null {
  const map = entries();
  const entry = map.get(tokenHash);
  if (!entry) return null;
  if (entry.until <= now) {
    map.delete(tokenHash);
    return null;
  }
  return entry.row;
}

export function cacheSession(tokenHash: string, row: SessionLookupRow, now: number) {
  const map = entries();
  map.delete(tokenHash);
  if (map.size >= SESSION_CACHE_MAX_ENTRIES) map.delete(map.keys().next().value!);
  map.set(tokenHash, { row, until: now + SESSION_CACHE_TTL_MS });
}

export function forgetSession(tokenHash: string) {
  entries().delete(tokenHash);
}

/** Drops every copy of the user's sessions: their profile or sessions changed in this process. */
export function forgetUserSessions(userId: string) {
  const map = entries();
  for (const [hash, entry] of map) if (entry.row.userId === userId) map.delete(hash);
}

/** Tests: start empty, as a fresh process would. */
export function resetSessionCache() {
  holder[CACHE] = undefined;
}
