// The one read on the path of every GET /auth/session with database sessions: the Session row by
// its token hash, joined to its user, as one prepared statement on the driver itself — a
// better-sqlite3 statement prepared once per connection, a PostgreSQL named prepared statement
// (parsed and planned once per pooled connection). The ORM would build, compile and interpret a
// query and map its result on every call (docs/decisions/056-database-session-reads.md).
// Kept next to the model (prisma/models.prisma: Session, User): a column renamed there is
// renamed here.
import type { Statement } from "better-sqlite3";
import { rawDriver } from "./client.server";

export type SessionLookupRow = {
  id: string;
  userId: string;
  expires: Date;
  createdAt: Date;
  lastUsedAt: Date;
  user: { name: string | null; email: string | null; image: string | null };
};

type RawRow = {
  id: string;
  userId: string;
  expires: number;
  createdAt: number;
  lastUsedAt: number;
  name: string | null;
  email: string | null;
  image: string | null;
};

// Times as milliseconds since the epoch, whatever text form SQLite holds them in (the client
// writes ISO-8601 with an offset; a column default would be "YYYY-MM-DD HH:MM:SS" in UTC).
const SQLITE_SQL = `SELECT s."id" AS id, s."userId" AS userId,
  CAST(round(unixepoch(s."expires", 'subsec') * 1000) AS INTEGER) AS expires,
  CAST(round(unixepoch(s."createdAt", 'subsec') * 1000) AS INTEGER) AS createdAt,
  CAST(round(unixepoch(s."lastUsedAt", 'subsec') * 1000) AS INTEGER) AS lastUsedAt,
  u."name" AS name, u."email" AS email, u."image" AS image
FROM "Session" s JOIN "User" u ON u."id" = s."userId"
WHERE s."tokenHash" = ? AND u."disabledAt" IS NULL`;

// TIMESTAMP(3) columns hold UTC without a zone: the epoch is taken as such, never as local time.
const POSTGRES_STATEMENT = "vestibule_session_by_token_hash";
const POSTGRES_SQL = `SELECT s."id" AS "id", s."userId" AS "userId",
  (extract(epoch FROM s."expires") * 1000)::float8 AS "expires",
  (extract(epoch FROM s."createdAt") * 1000)::float8 AS "createdAt",
  (extract(epoch FROM s."lastUsedAt") * 1000)::float8 AS "lastUsedAt",
  u."name" AS "name", u."email" AS "email", u."image" AS "image"
FROM "Session" s JOIN "User" u ON u."id" = s."userId"
WHERE s."tokenHash" = $1 AND u."disabledAt" IS NULL`;

const prepared = new WeakMap<object, Statement<[string], RawRow>>();

function toRow(r: RawRow | undefined): SessionLookupRow | null {
  if (!r) return null;
  return {
    id: r.id,
    userId: r.userId,
    expires: new Date(Number(r.expires)),
    createdAt: new Date(Number(r.createdAt)),
    lastUsedAt: new Date(Number(r.lastUsedAt)),
    user: { name: r.name, email: r.email, image: r.image },
  };
}

/** The session row whose token hashes to `tokenHash`, with its user; null when there is none or its user is disabled (ADR 078). */
export async function findSessionByTokenHash(tokenHash: string): Promise<SessionLookupRow | null> {
  const driver = rawDriver();
  if (driver.provider === "sqlite") {
    let statement = prepared.get(driver.sqlite);
    if (!statement) {
      statement = driver.sqlite.prepare<[string], RawRow>(SQLITE_SQL);
      prepared.set(driver.sqlite, statement);
    }
    return toRow(statement.get(tokenHash));
  }
  const result = await driver.pool.query<RawRow>({ name: POSTGRES_STATEMENT, text: POSTGRES_SQL, values: [tokenHash] });
  return toRow(result.rows[0]);
}
