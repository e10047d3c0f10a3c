// Sessions: the `jwt` and `database` strategies behind one interface. Both roll:
// using a session re-issues its cookie with a fresh expiry at most once per update age. Both are
// listed and ended from /account: a database session is its row; a jwt session carries a `sid`
// claim naming a row written at sign-in and at each roll (never per request), and ending it is
// enforced through the in-memory revocation list (revocation.server.ts, ADR 036).
import { randomUUID } from "node:crypto";
import type { JWTPayload } from "jose";
import { db } from "../../db/client.server";
import { queueAppLogouts, wakeAppLogouts } from "./session-apps.server";
import { findSessionByTokenHash, type SessionLookupRow } from "../../db/session-lookup.server";
import { extrasOf, hasSessionExtras, sessionExtrasFor, type SessionExtras } from "./app-config.server";
import type { JsonValue } from "./app-config";
import { getConfig } from "./config.server";
import { chunkNames, clearChunkedCookie, readChunkedCookie, serializeCookie, writeChunkedCookie } from "./cookies.server";
import { randomToken, sha256hex } from "./crypto.server";
import { encodeJwt, resealJwt, tryDecodeJwt } from "./jwt.server";
import { log } from "./log.server";
import { countEvent } from "./metrics.server";
import type { AuthRequest } from "./request.server";
import {
  endedInDatabase,
  EVERYONE_CUTOFF_ID,
  everyoneCutHere,
  isOrphaned,
  isRevoked,
  isSessionRevoked,
  knownCutoff,
  orphansCutOffHere,
  revocationsComplete,
  revocationsReady,
  revokedHere,
} from "./revocation.server";
import { openSealedCookie, resealLater } from "./sealed-cookies.server";
import { holdAnswerCookies } from "./request-context.server";
import { readDevice } from "./device-cookie.server";
import { cachedSession, cacheSession, forgetSession, forgetUserSessions } from "./session-cache.server";

/** The user as a session carries it. */
export type SessionUser = { id: string; name: string | null; email: string | null; image: string | null };

export type SessionData = {
  /** The layer's name, email and image, and the claims the app's session({ user }) adds (app/auth.config.ts). */
  user: { name: string | null; email: string | null; image: string | null } & SessionExtras;
  /** ISO-8601 */
  expires: string;
};

export type CurrentSession = {
  data: SessionData;
  userId: string;
  /** The session's row id — the database row, or the jwt cookie's `sid` (null: a cookie minted without one). */
  sessionId: string | null;
  /** When this session's sign-in happened (not its last roll), seconds since the epoch. */
  signedInAt: number;
};

export type SessionResult = { session: CurrentSession | null; setCookies: string[] };

/**
 * Limits shorter than the deployment's for one user's sessions, in seconds (an organization's
 * policy, ADR 166): registered from outside core, which knows no organization. Null: none.
 */
export type SessionLimits = { idleSeconds: number | null; absoluteSeconds: number | null };
export type SessionLimitLookup = (userId: string) => Promise<SessionLimits | null>;
let limitLookup: SessionLimitLookup | null = null;

export function registerSessionLimits(lookup: SessionLimitLookup | null): void {
  limitLookup = lookup;
}

function limitsOf(userId: string): Promise<SessionLimits | null> {
  return limitLookup ? limitLookup(userId) : Promise.resolve(null);
}

/** Past a limit: idle since `lastUsedMs` longer than allowed, or signed in (`signedInAt`, seconds) longer ago. */
function pastLimits(limits: SessionLimits | null, signedInAt: number, lastUsedMs: number, now: Date): boolean {
  if (!limits) return false;
  const nowMs = now.getTime();
  if (limits.absoluteSeconds !== null && nowMs / 1000 - signedInAt >= limits.absoluteSeconds) return true;
  return limits.idleSeconds !== null && nowMs - lastUsedMs > limits.idleSeconds * 1000;
}

/** The expiry a session's data shows under `limits`: no later than its idle end from now, nor its absolute end. */
function limitedExpiry(expires: Date, limits: SessionLimits | null, signedInAt: number, now: Date): Date {
  if (!limits) return expires;
  let end = expires.getTime();
  if (limits.idleSeconds !== null) end = Math.min(end, now.getTime() + limits.idleSeconds * 1000);
  if (limits.absoluteSeconds !== null) end = Math.min(end, (signedInAt + limits.absoluteSeconds) * 1000);
  return new Date(end);
}

const DB_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** How stale `lastUsedAt` may get before a read writes it (the expiry itself rolls daily). */
const LAST_USED_PRECISION_MS = 60 * 60 * 1000;
const MAX_USER_AGENT = 512;
const MAX_SID = 64;

function clearSessionCookies(ar: AuthRequest): string[] {
  return clearChunkedCookie(ar.cookies, ar.names.sessionToken, ar.secure);
}

function claimsFor(user: SessionUser): Record<string, unknown> {
  return { name: user.name, email: user.email, picture: user.image, sub: user.id };
}

/** The private claim of a jwt cookie that keeps the app's extra claims (session({ user }) of app/auth.config.ts). */
const EXTRA_CLAIM = "ext";

/**
 * The app's extra claims for this user, read from their row now; null without session({ user })
 * in app/auth.config.ts (then nothing is read) or when the user is gone.
 */
async function extrasForUser(userId: string): Promise<Record<string, JsonValue> | null> {
  if (!hasSessionExtras()) return null;
  const row = await db().user.findUnique({ where: { id: userId } });
  return row ? sessionExtrasFor(row) : null;
}

/** The jwt claims with the extra claim as it is now: set from the user's row, or dropped. */
async function withExtraClaim(claims: Record<string, unknown>, userId: string): Promise<Record<string, unknown>> {
  const { [EXTRA_CLAIM]: _old, ...rest } = claims;
  const extras = await extrasForUser(userId);
  return extras && Object.keys(extras).length ? { ...rest, [EXTRA_CLAIM]: extras } : rest;
}

/** The session's user: the app's extra claims first, so that they never replace the layer's own. */
function sessionUserData(own: { name: string | null; email: string | null; image: string | null }, extras: unknown): SessionData["user"] {
  return (hasSessionExtras() ? { ...extrasOf(extras), ...own } : { ...own }) as SessionData["user"];
}

/**
 * A private claim: the cookie's issue time in milliseconds. `iat` has whole seconds, and a cut-off
 * must end every cookie issued up to its own moment, the ones of that same second included.
 */
const ISSUED_AT_MS = "iat_ms";

function withoutRegistered(payload: JWTPayload): Record<string, unknown> {
  const { iat: _iat, exp: _exp, jti: _jti, nbf: _nbf, [ISSUED_AT_MS]: _iatMs, ...claims } = payload;
  return claims;
}

/**
 * When the cookie was issued (ms). A cookie without the claim (minted by Auth.js or before it
 * existed) counts as issued at the start of its `iat` second, so a cut-off in that second ends it.
 */
function issuedAtMsOf(payload: JWTPayload): number {
  const iat = typeof payload.iat === "number" ? payload.iat : 0;
  const ms = payload[ISSUED_AT_MS];
  return typeof ms === "number" && Number.isSafeInteger(ms) && Math.floor(ms / 1000) === iat ? ms : iat * 1000;
}

const str = (v: unknown) => (typeof v === "string" ? v : null);
const sidOf = (payload: JWTPayload) => {
  const sid = str(payload.sid);
  return sid && sid.length <= MAX_SID ? sid : null;
};
const userAgentOf = (ar: AuthRequest) => ar.request.headers.get("User-Agent")?.slice(0, MAX_USER_AGENT) ?? null;

/**
 * Seconds the cookie may live from `now`: the max age, shortened so that no session outlives
 * AUTH_SESSION_ABSOLUTE_MAX_AGE from its sign-in (seconds since the epoch).
 */
function lifetime(ar: AuthRequest, signedInAt: number, now: Date): number {
  const { sessionMaxAge, sessionAbsoluteMaxAge } = ar.config;
  if (sessionAbsoluteMaxAge === null) return sessionMaxAge;
  return Math.min(sessionMaxAge, signedInAt + sessionAbsoluteMaxAge - Math.floor(now.getTime() / 1000));
}

/**
 * A cookie issued longer ago than the configured max age is over, whatever its own `exp` says: one
 * minted before AUTH_SESSION_MAX_AGE was shortened lives no longer than the new setting allows, so
 * a cut-off kept for the configured max age outlives every cookie it refuses (ADR 113).
 */
function pastMaxAge(ar: AuthRequest, issuedAt: number, now: Date): boolean {
  return now.getTime() / 1000 - issuedAt > ar.config.sessionMaxAge;
}

/** Until when a cut-off written at `notBefore` is kept: the configured session max age (ADR 113). */
function cutoffExpiry(notBefore: Date): Date {
  return new Date(notBefore.getTime() + getConfig().sessionMaxAge * 1000);
}

function pastAbsoluteMaxAge(ar: AuthRequest, signedInAt: number, now: Date): boolean {
  const max = ar.config.sessionAbsoluteMaxAge;
  return max !== null && now.getTime() / 1000 - signedInAt >= max;
}

/**
 * Mints the user's jwt cookie. Every cookie minted here is issued after the user's cut-off this
 * process knows: each caller has just checked the cookie it replaces (a roll, a profile update),
 * signed the user in, or is re-issuing the one session a cut-off it wrote a moment ago keeps —
 * possibly in that same millisecond, which without this would end it with the others.
 */
async function writeJwtCookie(ar: AuthRequest, userId: string, claims: Record<string, unknown>, at: Date, maxAge = ar.config.sessionMaxAge) {
  const now = new Date(Math.max(at.getTime(), (knownCutoff(userId) ?? -1) + 1));
  const payload = { ...claims, [ISSUED_AT_MS]: now.getTime() };
  const token = await encodeJwt({ payload, secrets: ar.config.secrets, salt: ar.names.sessionToken, maxAge, now });
  const expires = new Date(Math.floor(now.getTime() / 1000) * 1000 + maxAge * 1000);
  return { expires, setCookies: writeChunkedCookie(ar.cookies, ar.names.sessionToken, token, { secure: ar.secure, expires }) };
}

function dbCookie(ar: AuthRequest, token: string, expires: Date) {
  return serializeCookie(ar.names.sessionToken, token, { secure: ar.secure, expires });
}

/** The jwt session's row, written at sign-in and at each roll so /account can list it. */
async function recordJwtSession(
  ar: AuthRequest,
  row: {
    sid: string;
    userId: string;
    method: string | null;
    factors: string | null;
    signedInAt: number;
    expires: Date;
    /** Only a sign-in says who it proved and how: a row a roll writes for a cookie minted elsewhere counts as long ago. */
    signIn?: { authenticatedAt: Date; credentialRef: string | null };
  },
  now: Date,
) {
  await db().session.upsert({
    where: { id: row.sid },
    create: {
      id: row.sid,
      kind: "jwt",
      userId: row.userId,
      method: row.method,
      factors: row.factors,
      expires: row.expires,
      createdAt: new Date(row.signedInAt * 1000),
      lastUsedAt: now,
      userAgent: userAgentOf(ar),
      authenticatedAt: row.signIn?.authenticatedAt ?? null,
      credentialRef: row.signIn?.credentialRef ?? null,
    },
    // Never clears revokedAt: a roll racing a revocation does not bring the session back.
    update: { expires: row.expires, lastUsedAt: now },
  });
}

/**
 * Reads the session; `roll` (default true) refreshes it when it was last extended over a day ago,
 * "now" re-issues it at once (a jwt cookie is then issued after every cut-off this process knows).
 */
export async function getSession(ar: AuthRequest, { roll = true as boolean | "now", now = new Date() } = {}): Promise<SessionResult> {
  const result = ar.config.sessionStrategy === "database" ? await getDatabaseSession(ar, roll !== false, now) : await getJwtSession(ar, roll, now);
  // The cookie this read re-issued (or cleared) reaches the answer even when the route that asked
  // drops it: the root middleware adds it unless the answer sets the cookie itself (ADR 118).
  if (result.setCookies.length) holdAnswerCookies(ar.names.sessionToken, result.setCookies);
  return result;
}

/**
 * While AUTH_SECRET holds more than one value (a rotation, ADR 109): the other long-lived sealed
 * cookie a browser holds — the device cookie, a year long, read only when it signs in — is opened
 * (and so sealed again with the first value, for this answer, when an older one sealed it) on the
 * requests where its session cookie is: found sealed with an older value (jwt), or extended (a
 * roll, both strategies: a database session's cookie is a random token, nothing sealed). Not on
 * every request: a browser active through the rotation window does one of these.
 */
async function resealLongLivedCookies(ar: AuthRequest): Promise<void> {
  if (ar.config.secrets.length < 2) return;
  await readDevice({ cookies: ar.cookies, secure: ar.secure, secrets: ar.config.secrets });
}

/**
 * The SHA-256 (hex) of this request's session cookie as sent, or null without one: names the
 * browser's session after its rows are gone (a deletion's second post of a double click).
 */
export function sessionCookieDigest(ar: AuthRequest): string | null {
  const raw = readChunkedCookie(ar.cookies, ar.names.sessionToken);
  return raw ? sha256hex(raw) : null;
}

/** `kept`: the request's own session, spared by the cut-off it just wrote (reissueSession). */
async function getJwtSession(ar: AuthRequest, roll: boolean | "now", now: Date, kept = false): Promise<SessionResult> {
  const raw = readChunkedCookie(ar.cookies, ar.names.sessionToken);
  if (!raw) {
    // Orphaned chunks (say .1 without .0) read as absent; clear them so they stop being sent.
    return { session: null, setCookies: chunkNames(ar.cookies, ar.names.sessionToken).length ? clearSessionCookies(ar) : [] };
  }
  const opened = await openSealedCookie({
    kind: "session",
    name: ar.names.sessionToken,
    raw,
    secrets: ar.config.secrets,
    secure: ar.secure,
    now,
    remember: true,
    reseal: false,
  });
  const payload = opened?.payload ?? null;
  const sub = str(payload?.sub);
  if (!payload || !sub || typeof payload.exp !== "number") return { session: null, setCookies: clearSessionCookies(ar) };

  const iat = typeof payload.iat === "number" ? payload.iat : 0;
  // A cookie minted without these (by Auth.js, or before they existed) gets them at its next roll;
  // until then its issue time stands for its sign-in.
  let sid = sidOf(payload);
  const signedInAt = typeof payload.auth_time === "number" ? payload.auth_time : iat;
  const loading = revocationsReady();
  if (loading) await loading;
  const issuedAtMs = issuedAtMsOf(payload);
  // An incomplete list (past its cap, ADR 064) cannot clear a cookie: the database decides, and a
  // database that cannot answer then ends it rather than let an ended one through.
  const ended = revocationsComplete()
    ? isRevoked(sid, sub, issuedAtMs, { cutoff: !kept }) || (!kept && (await isOrphaned(sid, sub, issuedAtMs)))
    : await endedInDatabase(sid, sub, issuedAtMs, { cutoff: !kept, failClosed: true });
  if (ended || pastMaxAge(ar, iat, now) || pastAbsoluteMaxAge(ar, signedInAt, now)) return { session: null, setCookies: clearSessionCookies(ar) };
  // An organization's shorter limits (ADR 166): idle counts from the cookie's last issue, which
  // is re-issued at least every half of the idle limit while the session is used.
  const limits = await limitsOf(sub);
  if (pastLimits(limits, signedInAt, iat * 1000, now)) {
    if (sid) await revokeJwtSessions({ id: sid, userId: sub }, now);
    return { session: null, setCookies: clearSessionCookies(ar) };
  }
  const updateAge = limits?.idleSeconds ? Math.min(ar.config.sessionUpdateAge, Math.floor(limits.idleSeconds / 2)) : ar.config.sessionUpdateAge;

  let exp = payload.exp;
  let setCookies: string[] = [];
  let claimsNow: Record<string, unknown> = payload;
  if (roll === "now" || (roll && now.getTime() / 1000 - iat >= updateAge)) {
    if (await endedInDatabase(sid, sub, issuedAtMs, { cutoff: !kept })) return { session: null, setCookies: clearSessionCookies(ar) };
    sid ??= randomUUID();
    // The app's extra claims are read again at each re-issue: a change to the user shows by the next one.
    claimsNow = await withExtraClaim({ ...withoutRegistered(payload), sid, auth_time: signedInAt }, sub);
    const written = await writeJwtCookie(ar, sub, claimsNow, now, lifetime(ar, signedInAt, now));
    exp = written.expires.getTime() / 1000;
    setCookies = written.setCookies;
    await resealLongLivedCookies(ar);
    try {
      await recordJwtSession(ar, { sid, userId: sub, method: null, factors: factorsText(payload.amr), signedInAt, expires: written.expires }, now);
    } catch (error) {
      // The session keeps working; it is missing from /account's list until its next roll.
      log("error", "session-record-failed", { error });
    }
  } else if (opened && opened.keyIndex > 0) {
    // Sealed before AUTH_SECRET was rotated (ADR 109): the same cookie — claims, issue time, expiry,
    // sign-in time — sealed with the first secret, so it outlives the old secret and no later.
    const token = await resealJwt({ payload, secrets: ar.config.secrets, salt: ar.names.sessionToken });
    setCookies = writeChunkedCookie(ar.cookies, ar.names.sessionToken, token, { secure: ar.secure, expires: new Date(exp * 1000) });
    resealLater(ar.names.sessionToken, setCookies);
    await resealLongLivedCookies(ar);
  }
  return {
    session: {
      data: {
        user: sessionUserData({ name: str(payload.name), email: str(payload.email), image: str(payload.picture) }, claimsNow[EXTRA_CLAIM]),
        expires: limitedExpiry(new Date(exp * 1000), limits, signedInAt, now).toISOString(),
      },
      userId: sub,
      sessionId: sid,
      signedInAt,
    },
    setCookies,
  };
}

/**
 * The row of a database session token: a copy read in the last few seconds when there is one and
 * the revocation list has not ended it, else one prepared statement (ADR 056).
 */
async function databaseSessionRow(tokenHash: string, now: Date): Promise<SessionLookupRow | null> {
  const loading = revocationsReady();
  if (loading) await loading;
  // An incomplete list (past its cap, ADR 064) cannot tell a copy still stands: read the row, whose
  // absence is the ending itself.
  if (!revocationsComplete()) return findSessionByTokenHash(tokenHash);
  const cached = cachedSession(tokenHash, now.getTime());
  if (cached) {
    if (!isSessionRevoked(cached.id)) return cached;
    forgetSession(tokenHash);
    return null;
  }
  const row = await findSessionByTokenHash(tokenHash);
  if (row && !isSessionRevoked(row.id)) cacheSession(tokenHash, row, now.getTime());
  return row;
}

async function getDatabaseSession(ar: AuthRequest, roll: boolean, now: Date): Promise<SessionResult> {
  const token = ar.cookies.get(ar.names.sessionToken);
  // Chunks alone (left from a jwt session before a strategy switch) are undecodable here: clear them.
  if (!token) return { session: null, setCookies: chunkNames(ar.cookies, ar.names.sessionToken).length ? clearSessionCookies(ar) : [] };
  if (!DB_TOKEN_PATTERN.test(token)) return { session: null, setCookies: clearSessionCookies(ar) };
  const tokenHash = sha256hex(token);
  const row = await databaseSessionRow(tokenHash, now);
  if (!row) return { session: null, setCookies: clearSessionCookies(ar) };
  const client = db();
  if (row.expires.getTime() <= now.getTime() || pastAbsoluteMaxAge(ar, row.createdAt.getTime() / 1000, now)) {
    forgetSession(tokenHash);
    // Whoever deletes the row reports the expiry: this read, or the cleanup (cleanup.server.ts).
    const { count } = await client.session.deleteMany({ where: { id: row.id } });
    countEvent("sessions-expired", { count, strategy: "database" });
    return { session: null, setCookies: clearSessionCookies(ar) };
  }
  // An organization's shorter limits (ADR 166): ended as an expired session is.
  const signedInAt = Math.floor(row.createdAt.getTime() / 1000);
  const limits = await limitsOf(row.userId);
  if (pastLimits(limits, signedInAt, row.lastUsedAt.getTime(), now)) {
    forgetSession(tokenHash);
    const { count } = await client.session.deleteMany({ where: { id: row.id } });
    countEvent("sessions-expired", { count, strategy: "database" });
    return { session: null, setCookies: clearSessionCookies(ar) };
  }
  // Under an idle limit the last use is written often enough to measure it (a tenth of it).
  const lastUsedPrecision = limits?.idleSeconds ? Math.min(LAST_USED_PRECISION_MS, limits.idleSeconds * 100) : LAST_USED_PRECISION_MS;
  let expires = row.expires;
  let setCookies: string[] = [];
  const { sessionMaxAge, sessionUpdateAge } = ar.config;
  const lastExtended = row.expires.getTime() - sessionMaxAge * 1000;
  if (roll && now.getTime() - lastExtended >= sessionUpdateAge * 1000) {
    expires = new Date(now.getTime() + lifetime(ar, Math.floor(row.createdAt.getTime() / 1000), now) * 1000);
    await client.session.update({ where: { id: row.id }, data: { expires, lastUsedAt: now } });
    cacheSession(tokenHash, { ...row, expires, lastUsedAt: now }, now.getTime());
    setCookies = [dbCookie(ar, token, expires)];
    await resealLongLivedCookies(ar);
  } else if (now.getTime() - row.lastUsedAt.getTime() > lastUsedPrecision) {
    await client.session.update({ where: { id: row.id }, data: { lastUsedAt: now } });
    cacheSession(tokenHash, { ...row, lastUsedAt: now }, now.getTime());
  }
  // The app's extra claims, from the user's row at each read (none read without session({ user })).
  const extras = await extrasForUser(row.userId);
  return {
    session: {
      data: { user: sessionUserData(row.user, extras), expires: limitedExpiry(expires, limits, signedInAt, now).toISOString() },
      userId: row.userId,
      sessionId: row.id,
      signedInAt,
    },
    setCookies,
  };
}

/**
 * Ends the database sessions `where` selects: their rows go, and a SessionRevocation note for
 * each tells every instance to drop a copy it may hold (this one at once). Returns how many.
 */
async function endDatabaseSessions(
  where: { userId?: string; id?: string | { not: string } | { in: string[] }; tokenHash?: string; credentialRef?: string },
  now: Date,
  { continuedAs = null as string | null } = {},
): Promise<{ id: string }[]> {
  const ended = await db().$transaction(async (tx) => {
    const rows = await tx.session.findMany({ where: { ...where, kind: "database" }, select: { id: true, userId: true, expires: true } });
    if (rows.length === 0) return rows;
    await tx.session.deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
    for (const r of rows) {
      await tx.sessionRevocation.upsert({
        where: { sessionId: r.id },
        create: { sessionId: r.id, revokedAt: now, expires: r.expires },
        update: { revokedAt: now, expires: r.expires },
      });
    }
    // The apps that got an ID token in these sessions are told, with the end (ADR 145).
    await queueAppLogouts(tx, rows.map((r) => r.id), { continuedAs });
    return rows;
  });
  if (ended.length && !continuedAs) wakeAppLogouts();
  revokedHere(ended);
  for (const userId of new Set(ended.map((r) => r.userId))) forgetUserSessions(userId);
  return ended;
}

/** The jwt cookie the request carries, decoded (or null). */
async function carriedJwt(ar: AuthRequest, now: Date) {
  const raw = readChunkedCookie(ar.cookies, ar.names.sessionToken);
  return raw ? tryDecodeJwt({ token: raw, secrets: ar.config.secrets, salt: ar.names.sessionToken, now }) : null;
}

/**
 * Ends jwt sessions everywhere: their rows are marked, this process refuses them at once, and the
 * apps that got an ID token in them are told (ADR 145) — unless the sign-in goes on as `continuedAs`.
 */
async function revokeJwtSessions(
  where: { userId?: string; id?: string | { in: string[] } | { not: string }; credentialRef?: string },
  now: Date,
  { continuedAs = null as string | null } = {},
) {
  const client = db();
  const rows = await client.session.findMany({
    where: { ...where, kind: "jwt", revokedAt: null, expires: { gt: now } },
    select: { id: true, expires: true },
  });
  if (rows.length === 0) return rows;
  await client.$transaction(async (tx) => {
    await tx.session.updateMany({ where: { id: { in: rows.map((r) => r.id) }, revokedAt: null }, data: { revokedAt: now } });
    await queueAppLogouts(tx, rows.map((r) => r.id), { continuedAs });
  });
  if (!continuedAs) wakeAppLogouts();
  revokedHere(rows);
  return rows;
}

/** The factors a sign-in proved as the Session row keeps them (space-separated), from a list or an `amr` claim. */
function factorsText(factors: unknown): string | null {
  if (!Array.isArray(factors)) return null;
  const names = factors.filter((f): f is string => typeof f === "string" && /^[a-z]{1,16}$/.test(f)).slice(0, 8);
  return names.length ? names.join(" ") : null;
}

/**
 * Starts a session for `user`, signed in with `method` (a provider id) proving `factors` (amr-like
 * names, RFC 8176 where one fits: the jwt cookie's `amr` claim and the Session row's `factors`),
 * and returns its Set-Cookie headers. Ends the session the request carried, if any.
 */
export async function createSession(
  ar: AuthRequest,
  user: SessionUser,
  {
    method = null as string | null,
    factors = [] as readonly string[],
    credentialRef = null as string | null,
    now = new Date(),
  } = {},
): Promise<string[]> {
  if (ar.config.sessionStrategy === "jwt") {
    const previous = await carriedJwt(ar, now);
    const previousSid = previous ? sidOf(previous) : null;
    if (previousSid) await revokeJwtSessions({ id: previousSid }, now);
    const sid = randomUUID();
    const signedInAt = Math.floor(now.getTime() / 1000);
    const amr = factors.length ? { amr: [...factors] } : {};
    const claims = await withExtraClaim({ ...claimsFor(user), sid, auth_time: signedInAt, ...amr }, user.id);
    const written = await writeJwtCookie(ar, user.id, claims, now, lifetime(ar, signedInAt, now));
    await recordJwtSession(
      ar,
      { sid, userId: user.id, method, factors: factorsText(factors), signedInAt, expires: written.expires, signIn: { authenticatedAt: now, credentialRef } },
      now,
    );
    return written.setCookies;
  }
  const previous = ar.cookies.get(ar.names.sessionToken);
  if (previous && DB_TOKEN_PATTERN.test(previous)) await endDatabaseSessions({ tokenHash: sha256hex(previous) }, now);
  const token = randomToken(32);
  const expires = new Date(now.getTime() + lifetime(ar, Math.floor(now.getTime() / 1000), now) * 1000);
  await db().session.create({
    data: {
      kind: "database",
      tokenHash: sha256hex(token),
      userId: user.id,
      method,
      factors: factorsText(factors),
      expires,
      createdAt: now,
      lastUsedAt: now,
      userAgent: userAgentOf(ar),
      authenticatedAt: now,
      credentialRef,
    },
  });
  // A JWT cookie from before a strategy switch may be chunked; expire any chunk besides the plain name.
  const stale = clearChunkedCookie(ar.cookies, ar.names.sessionToken, ar.secure).filter(
    (c) => !c.startsWith(`${ar.names.sessionToken}=`),
  );
  return [...stale, dbCookie(ar, token, expires)];
}

/**
 * Re-issues the session after the user's profile changed (jwt: new claims; database: reads the
 * row). `kept`: the request's own session, spared by the cut-off this request just wrote (an
 * e-mail change), as in reissueSession.
 */
export async function refreshSession(ar: AuthRequest, user: SessionUser, { now = new Date(), kept = false } = {}): Promise<SessionResult> {
  if (ar.config.sessionStrategy === "jwt") {
    const payload = await carriedJwt(ar, now);
    const iat = typeof payload?.iat === "number" ? payload.iat : Math.floor(now.getTime() / 1000);
    if (payload && (await endedInDatabase(sidOf(payload), user.id, issuedAtMsOf(payload), { cutoff: !kept }))) {
      return { session: null, setCookies: clearSessionCookies(ar) };
    }
    const signedInAt = typeof payload?.auth_time === "number" ? payload.auth_time : iat;
    const claims = await withExtraClaim({ ...(payload ? withoutRegistered(payload) : {}), ...claimsFor(user), auth_time: signedInAt }, user.id);
    const written = await writeJwtCookie(ar, user.id, claims, now, lifetime(ar, signedInAt, now));
    // The new cookie expires later than the one it replaces: its row says so too, as at a roll.
    // A row left at the old expiry would drop out of /account's list, and an ending of this
    // session would be forgotten (revocation list, cleanup) while the cookie still lives.
    const sid = payload ? sidOf(payload) : null;
    if (sid) await recordJwtSession(ar, { sid, userId: user.id, method: null, factors: factorsText(payload?.amr), signedInAt, expires: written.expires }, now);
    return {
      session: {
        data: { user: sessionUserData({ name: user.name, email: user.email, image: user.image }, claims[EXTRA_CLAIM]), expires: written.expires.toISOString() },
        userId: user.id,
        sessionId: sid,
        signedInAt,
      },
      setCookies: written.setCookies,
    };
  }
  // The user's name, address or picture just changed here: read the row, not a copy.
  forgetUserSessions(user.id);
  return getSession(ar, { roll: true, now });
}

/** Ends the request's session: deletes its row (database) or revokes its sid (jwt), and expires every session-cookie chunk. */
export async function endSession(ar: AuthRequest, now = new Date()): Promise<{ userId: string | null; setCookies: string[] }> {
  const { session } = await getSession(ar, { roll: false, now });
  if (ar.config.sessionStrategy === "database") {
    const token = ar.cookies.get(ar.names.sessionToken);
    if (token && DB_TOKEN_PATTERN.test(token)) await endDatabaseSessions({ tokenHash: sha256hex(token) }, now);
  } else if (session?.sessionId) {
    await revokeJwtSessions({ id: session.sessionId, userId: session.userId }, now);
  }
  return { userId: session?.userId ?? null, setCookies: clearSessionCookies(ar) };
}

export type DeviceSession = {
  id: string;
  kind: "jwt" | "database";
  method: string | null;
  /** The way in that started it (opaque here: the method's own reference), for naming it on a page. */
  credentialRef: string | null;
  /** The factors its sign-in proved (amr-like names, e.g. pwd otp mfa); empty when not recorded. */
  factors: string[];
  createdAt: Date;
  lastUsedAt: Date;
  expires: Date;
  userAgent: string | null;
  current: boolean;
};

/** The user's live sessions of both strategies, newest use first. */
export async function listSessions(userId: string, currentSessionId: string | null, now = new Date()): Promise<DeviceSession[]> {
  const rows = await db().session.findMany({
    where: { userId, expires: { gt: now }, revokedAt: null },
    orderBy: [{ lastUsedAt: "desc" }, { createdAt: "desc" }],
    select: { id: true, kind: true, method: true, credentialRef: true, factors: true, createdAt: true, lastUsedAt: true, expires: true, userAgent: true },
  });
  return rows.map((r) => ({
    ...r,
    kind: r.kind === "jwt" ? "jwt" : "database",
    factors: r.factors ? r.factors.split(" ") : [],
    current: r.id === currentSessionId,
  }));
}

/** Ends one of the user's sessions, of either strategy; false when it is not theirs or already ended. */
export async function revokeSession(userId: string, sessionId: string, now = new Date()): Promise<boolean> {
  if ((await endDatabaseSessions({ id: sessionId, userId }, now)).length > 0) return true;
  return (await revokeJwtSessions({ id: sessionId, userId }, now)).length > 0;
}

/**
 * Ends every session of the user, of both strategies, but `except` (a session id) when given:
 * "sign out everywhere", "sign out of other devices", a password or e-mail change. Besides each
 * listed jwt session, a cut-off refuses every jwt cookie of the user issued up to and including
 * now, to the millisecond (those minted without a sid, a stolen copy of the kept one, one rolled in
 * this very moment); the caller re-issues the kept jwt cookie (reissueSession, or refreshSession
 * with `kept`), which is minted after the cut-off.
 */
export async function revokeUserSessions(userId: string, { except = null as string | null, now = new Date() } = {}): Promise<number> {
  const client = db();
  const keep = except ? { not: except } : undefined;
  const count = (await endDatabaseSessions({ userId, ...(keep ? { id: keep } : {}) }, now)).length;
  const jwt = await revokeJwtSessions({ userId, ...(keep ? { id: keep } : {}) }, now);
  // To the millisecond: every cookie issued up to this moment is refused, those of this same second
  // included; the kept one is minted after it (writeJwtCookie).
  const notBefore = now;
  const expires = cutoffExpiry(notBefore);
  await client.sessionCutoff.upsert({ where: { userId }, create: { userId, notBefore, expires }, update: { notBefore, expires } });
  revokedHere([], { userId, notBefore, expires });
  await revokeProviderGrants({ accountId: userId });
  return count + jwt.length;
}

/**
 * What the user allowed apps through Vestibule's OAuth provider (docs/features/provider.md,
 * ADR 135) ends with their sessions: every grant, refresh token, code and provider session of
 * the user, and the refresh answers kept for those grants. The provider's rows, by their columns
 * (core knows no provider). A JWT access token already issued lives out its short lifetime.
 */
async function revokeProviderGrants(where: { accountId: string } | { accountId: { not: null } }): Promise<void> {
  const client = db();
  const grants = (await client.oAuthPayload.findMany({ where: { kind: "Grant", ...where }, select: { id: true } })).map((g) => g.id);
  await client.oAuthPayload.deleteMany({ where: { OR: [where, ...(grants.length ? [{ grantId: { in: grants } }] : [])] } });
}

/**
 * A re-authentication's cut-off (ADR 103): every jwt cookie of the user issued up to `now` that
 * names no live session row is refused, on every instance; cookies whose rows live stay. Kept for
 * the session max age, past which every such cookie has expired on its own.
 */
async function cutOffOrphanCookies(userId: string, now: Date) {
  const notBefore = now;
  const expires = cutoffExpiry(notBefore);
  await db().sessionOrphanCutoff.upsert({ where: { userId }, create: { userId, notBefore, expires }, update: { notBefore, expires } });
  orphansCutOffHere({ userId, notBefore, expires });
}

/**
 * Ends every session of every user, of both strategies, on every instance ("end every session",
 * `npm run sessions:end-all`, ADR 107): the cut-off of revokeUserSessions for everyone at once —
 * one GlobalSessionCutoff row that refuses every cookie issued up to now, whoever's (written first,
 * so nothing issued before it outlives it), announced to the other instances — then every database
 * session row deleted with its revocation note, and every jwt session row marked ended. Returns
 * how many sessions were open.
 */
export async function revokeAllSessions(now = new Date()): Promise<number> {
  const notBefore = now;
  const expires = cutoffExpiry(notBefore);
  await db().globalSessionCutoff.upsert({ where: { id: EVERYONE_CUTOFF_ID }, create: { id: EVERYONE_CUTOFF_ID, notBefore, expires }, update: { notBefore, expires } });
  everyoneCutHere({ notBefore, expires });
  const database = await endDatabaseSessions({}, now);
  const jwt = await db().$transaction(async (tx) => {
    const { count } = await tx.session.updateMany({ where: { kind: "jwt", revokedAt: null, expires: { gt: now } }, data: { revokedAt: now } });
    // Every session ended: every app recorded in one is told (ADR 145).
    await queueAppLogouts(tx, "all");
    return count;
  });
  wakeAppLogouts();
  await revokeProviderGrants({ accountId: { not: null } });
  return database.length + jwt;
}

/**
 * Issues the request's jwt cookie again now (after revokeUserSessions kept it); database sessions
 * need nothing. The cookie was issued before the cut-off revokeUserSessions wrote a moment ago, so
 * that cut-off is not applied to it (only its sid, which was spared, is checked); the new cookie is
 * issued after the cut-off (writeJwtCookie) and passes it everywhere; the old one, and any copy
 * of it, stays refused.
 */
export async function reissueSession(ar: AuthRequest, now = new Date()): Promise<string[]> {
  if (ar.config.sessionStrategy === "database") return [];
  return (await getJwtSession(ar, "now", now, true)).setCookies;
}

/**
 * Ends every session of the user that `credentialRef` started (an unlinked account, a removed
 * passkey:), of both strategies, on every instance through the revocation
 * list. Returns the ended session ids, so the caller knows whether its own was among them.
 */
export async function endSessionsStartedWith(userId: string, credentialRef: string, now = new Date()): Promise<string[]> {
  const database = await endDatabaseSessions({ userId, credentialRef }, now);
  const jwt = await revokeJwtSessions({ userId, credentialRef }, now);
  return [...database, ...jwt].map((r) => r.id);
}

/**
 * Ends every session of the user whose method is not one of `notMethods` (a session of unknown
 * method too), of both strategies, on every instance: an organization's requireSso turned on
 * ends the sessions that did not come through its connections (ADR 165). Returns the ended ids.
 */
export async function endSessionsWhere(where: { userId: string; notMethods: readonly string[] }, now = new Date()): Promise<string[]> {
  const ids = (
    await db().session.findMany({
      where: { userId: where.userId, OR: [{ method: null }, { method: { notIn: [...where.notMethods] } }] },
      select: { id: true },
    })
  ).map((r) => r.id);
  if (ids.length === 0) return [];
  const database = await endDatabaseSessions({ userId: where.userId, id: { in: ids } }, now);
  const jwt = await revokeJwtSessions({ userId: where.userId, id: { in: ids } }, now);
  forgetUserSessions(where.userId);
  return [...database, ...jwt].map((r) => r.id);
}

/**
 * When the person last proved who they are in this session (its row's authenticatedAt: the
 * sign-in, never a roll). Null — counted as long ago — for a cookie naming no row, an ended or
 * expired row, or a row written by a roll.
 */
export async function sessionAuthenticatedAt(session: CurrentSession, now = new Date()): Promise<Date | null> {
  if (!session.sessionId) return null;
  const row = await db().session.findFirst({
    where: { id: session.sessionId, userId: session.userId, revokedAt: null, expires: { gt: now } },
    select: { authenticatedAt: true },
  });
  return row?.authenticatedAt ?? null;
}

/**
 * Adds `factors` to what the session recorded that it proved — its row, which both strategies keep
 * and which the required-MFA gate and re-authentication read (a jwt cookie's `amr` claim stays as
 * issued until the next re-authentication). In place, for a change whose answer is rendered by
 * the same request (turning TOTP on shows the recovery codes in it); returns false when the
 * session has no row any more.
 */
export async function addSessionFactors(session: CurrentSession, factors: readonly string[]): Promise<boolean> {
  if (!session.sessionId) return false;
  const client = db();
  const row = await client.session.findFirst({ where: { id: session.sessionId, userId: session.userId }, select: { factors: true } });
  if (!row) return false;
  const proved = factorsText([...new Set([...(row.factors ? row.factors.split(" ") : []), ...factors])]);
  const { count } = await client.session.updateMany({ where: { id: session.sessionId, userId: session.userId }, data: { factors: proved } });
  return count === 1;
}

/**
 * A re-authentication of the request's session (ADR 080): the person proved
 * who they are again, so the session becomes recent — under a new id and a new cookie. The old
 * cookie, and any copy of it a thief holds, ends here on every instance (the revocation list), so
 * a copy never becomes recent because its owner re-authenticated. The sign-in it continues stays:
 * its start (the absolute lifetime counts from it), method, factors and the way in it started
 * with (credentialRef). Returns the new cookie's Set-Cookie headers, or null when the request's
 * session is not `session` any more (ended, replaced, another user's).
 */
export async function renewAuthentication(
  ar: AuthRequest,
  session: CurrentSession,
  { factors = [] as readonly string[], now = new Date() } = {},
): Promise<string[] | null> {
  const client = db();
  // What the session has proved so far and what was proved now: a second factor given here counts
  // (ADR 045 lets a session that proved `mfa` add a passkey).
  const withProved = (before: string | null) => factorsText([...new Set([...(before ? before.split(" ") : []), ...factors])]);
  if (ar.config.sessionStrategy === "jwt") {
    const payload = await carriedJwt(ar, now);
    if (!payload || str(payload.sub) !== session.userId || sidOf(payload) !== session.sessionId) return null;
    const old = session.sessionId
      ? await client.session.findUnique({
          where: { id: session.sessionId },
          select: { userId: true, kind: true, revokedAt: true, method: true, factors: true, credentialRef: true },
        })
      : null;
    // An ended session, or another's, is not continued. A cookie naming no row goes on as one without a sid.
    if (old && (old.userId !== session.userId || old.kind !== "jwt" || old.revokedAt)) return null;
    const sid = randomUUID();
    // The sign-in goes on under the new sid: the apps it signed in to stay signed in (ADR 145).
    if (old) await revokeJwtSessions({ id: session.sessionId!, userId: session.userId }, now, { continuedAs: sid });
    // Copies of cookies naming no live row (no sid; a sid without its row) have no id to end: a
    // cut-off ends them all, before the renewed cookie is issued (ADR 103).
    await cutOffOrphanCookies(session.userId, now);
    const signedInAt = session.signedInAt;
    const proved = withProved(old?.factors ?? factorsText(payload.amr));
    const amr = proved ? { amr: proved.split(" ") } : {};
    const claims = { ...withoutRegistered(payload), sid, auth_time: signedInAt, ...amr };
    const written = await writeJwtCookie(ar, session.userId, claims, now, lifetime(ar, signedInAt, now));
    await recordJwtSession(
      ar,
      {
        sid,
        userId: session.userId,
        method: old?.method ?? null,
        factors: proved,
        signedInAt,
        expires: written.expires,
        signIn: { authenticatedAt: now, credentialRef: old?.credentialRef ?? null },
      },
      now,
    );
    return written.setCookies;
  }
  const token = ar.cookies.get(ar.names.sessionToken);
  if (!token || !DB_TOKEN_PATTERN.test(token)) return null;
  const old = await client.session.findFirst({
    where: { tokenHash: sha256hex(token), id: session.sessionId ?? undefined, userId: session.userId, kind: "database" },
  });
  if (!old || old.expires.getTime() <= now.getTime()) return null;
  const fresh = randomToken(32);
  // The new row first: a failure leaves the old session as it was.
  const renewed = await client.session.create({
    data: {
      kind: "database",
      tokenHash: sha256hex(fresh),
      userId: old.userId,
      method: old.method,
      factors: withProved(old.factors),
      expires: old.expires,
      createdAt: old.createdAt,
      lastUsedAt: now,
      userAgent: userAgentOf(ar) ?? old.userAgent,
      authenticatedAt: now,
      credentialRef: old.credentialRef,
    },
  });
  await endDatabaseSessions({ id: old.id }, now, { continuedAs: renewed.id });
  return [dbCookie(ar, fresh, old.expires)];
}
