// Sessions (contract §6): the `jwt` and `database` strategies behind one interface. Both roll:
// using a session re-issues its cookie with a fresh expiry at most once per update age.
import type { JWTPayload } from "jose";
import { db } from "../../db/client.server";
import { chunkNames, clearChunkedCookie, readChunkedCookie, serializeCookie, writeChunkedCookie } from "./cookies.server";
import { randomToken, sha256hex } from "./crypto.server";
import { encodeJwt, tryDecodeJwt } from "./jwt.server";
import type { AuthRequest } from "./request.server";

/** The user as a session carries it. */
export type SessionUser = { id: string; name: string | null; email: string | null; image: string | null };

export type SessionData = {
  user: { name: string | null; email: string | null; image: string | null };
  /** ISO-8601 */
  expires: string;
};

export type CurrentSession = {
  data: SessionData;
  userId: string;
  /** The database row's id (database strategy), for "sign out of this device". */
  sessionId: string | null;
};

export type SessionResult = { session: CurrentSession | null; setCookies: string[] };

const DB_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** How stale `lastUsedAt` may get before a read writes it (the expiry itself rolls daily). */
const LAST_USED_PRECISION_MS = 60 * 60 * 1000;
const MAX_USER_AGENT = 512;

function clearSessionCookies(ar: AuthRequest): string[] {
  return clearChunkedCookie(ar.cookies, ar.names.sessionToken, ar.secure);
}

function claimsFor(user: SessionUser): Record<string, unknown> {
  return { name: user.name, email: user.email, picture: user.image, sub: user.id };
}

function withoutRegistered(payload: JWTPayload): Record<string, unknown> {
  const { iat: _iat, exp: _exp, jti: _jti, nbf: _nbf, ...claims } = payload;
  return claims;
}

const str = (v: unknown) => (typeof v === "string" ? v : null);

async function writeJwtCookie(ar: AuthRequest, claims: Record<string, unknown>, now: Date) {
  const { sessionMaxAge } = ar.config;
  const token = await encodeJwt({ payload: claims, secrets: ar.config.secrets, salt: ar.names.sessionToken, maxAge: sessionMaxAge, now });
  const expires = new Date(Math.floor(now.getTime() / 1000) * 1000 + sessionMaxAge * 1000);
  return { expires, setCookies: writeChunkedCookie(ar.cookies, ar.names.sessionToken, token, { secure: ar.secure, expires }) };
}

function dbCookie(ar: AuthRequest, token: string, expires: Date) {
  return serializeCookie(ar.names.sessionToken, token, { secure: ar.secure, expires });
}

/** Reads the session; `roll` (default true) refreshes it when it was last extended over a day ago. */
export async function getSession(ar: AuthRequest, { roll = true, now = new Date() } = {}): Promise<SessionResult> {
  return ar.config.sessionStrategy === "database" ? getDatabaseSession(ar, roll, now) : getJwtSession(ar, roll, now);
}

async function getJwtSession(ar: AuthRequest, roll: boolean, now: Date): Promise<SessionResult> {
  const raw = readChunkedCookie(ar.cookies, ar.names.sessionToken);
  if (!raw) {
    // Orphaned chunks (say .1 without .0) read as absent; clear them so they stop being sent.
    return { session: null, setCookies: chunkNames(ar.cookies, ar.names.sessionToken).length ? clearSessionCookies(ar) : [] };
  }
  const payload = await tryDecodeJwt({ token: raw, secrets: ar.config.secrets, salt: ar.names.sessionToken, now });
  const sub = str(payload?.sub);
  if (!payload || !sub || typeof payload.exp !== "number") return { session: null, setCookies: clearSessionCookies(ar) };

  let exp = payload.exp;
  let setCookies: string[] = [];
  const iat = typeof payload.iat === "number" ? payload.iat : 0;
  if (roll && now.getTime() / 1000 - iat >= ar.config.sessionUpdateAge) {
    const written = await writeJwtCookie(ar, withoutRegistered(payload), now);
    exp = written.expires.getTime() / 1000;
    setCookies = written.setCookies;
  }
  return {
    session: {
      data: {
        user: { name: str(payload.name), email: str(payload.email), image: str(payload.picture) },
        expires: new Date(exp * 1000).toISOString(),
      },
      userId: sub,
      sessionId: null,
    },
    setCookies,
  };
}

async function getDatabaseSession(ar: AuthRequest, roll: boolean, now: Date): Promise<SessionResult> {
  const token = ar.cookies.get(ar.names.sessionToken);
  // Chunks alone (left from a jwt session before a strategy switch) are undecodable here: clear them.
  if (!token) return { session: null, setCookies: chunkNames(ar.cookies, ar.names.sessionToken).length ? clearSessionCookies(ar) : [] };
  if (!DB_TOKEN_PATTERN.test(token)) return { session: null, setCookies: clearSessionCookies(ar) };
  const client = db();
  const row = await client.session.findUnique({
    where: { tokenHash: sha256hex(token) },
    include: { user: { select: { name: true, email: true, image: true } } },
  });
  if (!row) return { session: null, setCookies: clearSessionCookies(ar) };
  if (row.expires.getTime() <= now.getTime()) {
    await client.session.deleteMany({ where: { id: row.id } });
    return { session: null, setCookies: clearSessionCookies(ar) };
  }
  let expires = row.expires;
  let setCookies: string[] = [];
  const { sessionMaxAge, sessionUpdateAge } = ar.config;
  const lastExtended = row.expires.getTime() - sessionMaxAge * 1000;
  if (roll && now.getTime() - lastExtended >= sessionUpdateAge * 1000) {
    expires = new Date(now.getTime() + sessionMaxAge * 1000);
    await client.session.update({ where: { id: row.id }, data: { expires, lastUsedAt: now } });
    setCookies = [dbCookie(ar, token, expires)];
  } else if (now.getTime() - row.lastUsedAt.getTime() > LAST_USED_PRECISION_MS) {
    await client.session.update({ where: { id: row.id }, data: { lastUsedAt: now } });
  }
  return {
    session: { data: { user: row.user, expires: expires.toISOString() }, userId: row.userId, sessionId: row.id },
    setCookies,
  };
}

/** Starts a session for `user` and returns its Set-Cookie headers. Ends a database session the request carried. */
export async function createSession(ar: AuthRequest, user: SessionUser, now = new Date()): Promise<string[]> {
  if (ar.config.sessionStrategy === "jwt") return (await writeJwtCookie(ar, claimsFor(user), now)).setCookies;
  const previous = ar.cookies.get(ar.names.sessionToken);
  if (previous && DB_TOKEN_PATTERN.test(previous)) {
    await db().session.deleteMany({ where: { tokenHash: sha256hex(previous) } });
  }
  const token = randomToken(32);
  const expires = new Date(now.getTime() + ar.config.sessionMaxAge * 1000);
  await db().session.create({
    data: {
      tokenHash: sha256hex(token),
      userId: user.id,
      expires,
      createdAt: now,
      lastUsedAt: now,
      userAgent: ar.request.headers.get("User-Agent")?.slice(0, MAX_USER_AGENT) ?? null,
    },
  });
  // A JWT cookie from before a strategy switch may be chunked; expire any chunk besides the plain name.
  const stale = clearChunkedCookie(ar.cookies, ar.names.sessionToken, ar.secure).filter(
    (c) => !c.startsWith(`${ar.names.sessionToken}=`),
  );
  return [...stale, dbCookie(ar, token, expires)];
}

/** Re-issues the session after the user's profile changed (jwt: new claims; database: reads the row). */
export async function refreshSession(ar: AuthRequest, user: SessionUser, now = new Date()): Promise<SessionResult> {
  if (ar.config.sessionStrategy === "jwt") {
    const raw = readChunkedCookie(ar.cookies, ar.names.sessionToken);
    const payload = raw ? await tryDecodeJwt({ token: raw, secrets: ar.config.secrets, salt: ar.names.sessionToken, now }) : null;
    const claims = { ...(payload ? withoutRegistered(payload) : {}), ...claimsFor(user) };
    const written = await writeJwtCookie(ar, claims, now);
    return {
      session: {
        data: { user: { name: user.name, email: user.email, image: user.image }, expires: written.expires.toISOString() },
        userId: user.id,
        sessionId: null,
      },
      setCookies: written.setCookies,
    };
  }
  return getSession(ar, { roll: true, now });
}

/** Ends the request's session: deletes its row (database) and expires every session-cookie chunk. */
export async function endSession(ar: AuthRequest): Promise<{ userId: string | null; setCookies: string[] }> {
  const { session } = await getSession(ar, { roll: false });
  if (ar.config.sessionStrategy === "database") {
    const token = ar.cookies.get(ar.names.sessionToken);
    if (token && DB_TOKEN_PATTERN.test(token)) await db().session.deleteMany({ where: { tokenHash: sha256hex(token) } });
  }
  return { userId: session?.userId ?? null, setCookies: clearSessionCookies(ar) };
}

export type DeviceSession = {
  id: string;
  createdAt: Date;
  lastUsedAt: Date;
  expires: Date;
  userAgent: string | null;
  current: boolean;
};

/** The user's live database sessions, newest use first. */
export async function listSessions(userId: string, currentSessionId: string | null, now = new Date()): Promise<DeviceSession[]> {
  const rows = await db().session.findMany({
    where: { userId, expires: { gt: now } },
    orderBy: { lastUsedAt: "desc" },
    select: { id: true, createdAt: true, lastUsedAt: true, expires: true, userAgent: true },
  });
  return rows.map((r) => ({ ...r, current: r.id === currentSessionId }));
}

/** Deletes one of the user's sessions; false when it is not theirs or already gone. */
export async function revokeSession(userId: string, sessionId: string): Promise<boolean> {
  const { count } = await db().session.deleteMany({ where: { id: sessionId, userId } });
  return count > 0;
}

/** "Sign out everywhere": deletes every session row of the user. */
export async function revokeAllSessions(userId: string): Promise<number> {
  const { count } = await db().session.deleteMany({ where: { userId } });
  return count;
}
