// The OAuth engine's rows on the path of every token request (adapter.server.ts: find, consume,
// upsert; engine.server.ts: the kept refresh answer and the user; clients.server.ts: the client) as statements on the driver itself, each
// prepared once per connection: a better-sqlite3 statement, a PostgreSQL named prepared statement.
// Through the ORM each of them was built, compiled and interpreted on every call and, on SQLite,
// prepared anew (the adapter keeps no statement cache): most of a refresh grant's time (ADR 172).
// Kept next to the model (prisma/models.prisma: OAuthPayload, OAuthClient, User); a column renamed there is renamed
// here. Reads go by the read connection (as the session lookup's, ADR 056), writes by the
// client's own connection or pool (rawWrite). Times are written as the ORM writes them.
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { Statement } from "better-sqlite3";
import { rawDriver, rawWrite } from "../../db/client.server";

/**
 * The engine's kinds whose id is the token itself (what a client presents): kept under the
 * token's SHA-256, never as itself, so a copy of the table is no set of live tokens (ADR 177).
 */
export const TOKEN_KINDS: ReadonlySet<string> = new Set([
  "AccessToken",
  "RefreshToken",
  "AuthorizationCode",
  "DeviceCode",
  "ClientCredentials",
  "BackchannelAuthenticationRequest",
  "RegistrationAccessToken",
  "InitialAccessToken",
  "PushedAuthorizationRequest",
]);

/** The row id a token is kept under: its SHA-256, base64url (a token is 256 random bits: no salt or stretching needed). */
export function tokenRowId(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}

/** The row id of the engine's (kind, id): hashed for a token kind, as it is for the rest (grants, sessions, interactions). */
export function rowIdOf(kind: string, id: string): string {
  return TOKEN_KINDS.has(kind) ? tokenRowId(id) : id;
}

export type PayloadColumns = {
  payload: string;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  accountId: string | null;
  clientId: string | null;
  expiresAt: Date | null;
};

export type FoundPayload = { payload: string; consumedAt: Date | null };

const SQLITE = {
  // Milliseconds since the epoch, whatever text form the column holds (see session-lookup.server.ts).
  find: `SELECT "payload" AS payload, CAST(round(unixepoch("consumedAt", 'subsec') * 1000) AS INTEGER) AS consumedAt
FROM "OAuthPayload" WHERE "kind" = ? AND "id" = ?`,
  consume: `UPDATE "OAuthPayload" SET "consumedAt" = ? WHERE "kind" = ? AND "id" = ? AND "consumedAt" IS NULL`,
  release: `UPDATE "OAuthPayload" SET "consumedAt" = NULL WHERE "kind" = ? AND "id" = ?`,
  client: `SELECT "metadata" AS metadata, "secretSealed" AS secretSealed FROM "OAuthClient" WHERE "clientId" = ?`,
  account: `SELECT "email" AS email, "emailVerified" IS NOT NULL AS emailVerified, "name" AS name, "disabledAt" IS NOT NULL AS disabled FROM "User" WHERE "id" = ?`,
} as const;

// TIMESTAMP(3) columns hold UTC without a zone: written as ISO text without one, read as epoch ms.
const POSTGRES = {
  find: {
    name: "vestibule_oauth_payload_find",
    text: `SELECT "payload", round(extract(epoch FROM "consumedAt") * 1000)::float8 AS "consumedAt" FROM "OAuthPayload" WHERE "kind" = $1 AND "id" = $2`,
  },
  consume: {
    name: "vestibule_oauth_payload_consume",
    text: `UPDATE "OAuthPayload" SET "consumedAt" = $1::timestamp(3) WHERE "kind" = $2 AND "id" = $3 AND "consumedAt" IS NULL`,
  },
  release: { name: "vestibule_oauth_payload_release", text: `UPDATE "OAuthPayload" SET "consumedAt" = NULL WHERE "kind" = $1 AND "id" = $2` },
  client: { name: "vestibule_oauth_client_find", text: `SELECT "metadata", "secretSealed" FROM "OAuthClient" WHERE "clientId" = $1` },
  account: {
    name: "vestibule_oauth_account_find",
    text: `SELECT "email", "emailVerified" IS NOT NULL AS "emailVerified", "name", "disabledAt" IS NOT NULL AS "disabled" FROM "User" WHERE "id" = $1`,
  },
} as const;

/** The columns of an upsert, in the order its values are given. */
const UPSERT_COLUMNS = `"kind", "id", "payload", "grantId", "uid", "userCode", "accountId", "clientId", "expiresAt", "createdAt"`;
const UPSERT_ON_CONFLICT = `ON CONFLICT ("kind", "id") DO UPDATE SET "payload" = excluded."payload", "grantId" = excluded."grantId", "uid" = excluded."uid",
  "userCode" = excluded."userCode", "accountId" = excluded."accountId", "clientId" = excluded."clientId", "expiresAt" = excluded."expiresAt"`;
/** Rows written by one upsert statement at most (a token answer writes two or three). */
export const ROWS_PER_UPSERT = 8;

/** The upsert of `n` rows at once, for SQLite (made once per `n`). */
const sqliteUpserts = new Map<number, { sql: string }>();
function sqliteUpsertOf(n: number): { sql: string } {
  let made = sqliteUpserts.get(n);
  if (!made) sqliteUpserts.set(n, (made = { sql: sqliteUpsertText(n) }));
  return made;
}

function sqliteUpsertText(n: number): string {
  const row = `(${Array.from({ length: 10 }, () => "?").join(", ")})`;
  return `INSERT INTO "OAuthPayload" (${UPSERT_COLUMNS}) VALUES ${Array.from({ length: n }, () => row).join(", ")} ${UPSERT_ON_CONFLICT}`;
}

/** The upsert of `n` rows at once, for PostgreSQL: a named prepared statement of its own per `n` (made once). */
const postgresUpserts = new Map<number, { name: string; text: string }>();
function postgresUpsertOf(n: number): { name: string; text: string } {
  let made = postgresUpserts.get(n);
  if (!made) postgresUpserts.set(n, (made = postgresUpsertText(n)));
  return made;
}

function postgresUpsertText(n: number): { name: string; text: string } {
  const rows = Array.from({ length: n }, (_, r) => {
    const p = (i: number) => `$${r * 10 + i}`;
    return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}::timestamp(3), ${p(10)}::timestamp(3))`;
  });
  return { name: `vestibule_oauth_payload_upsert_${n}`, text: `INSERT INTO "OAuthPayload" (${UPSERT_COLUMNS}) VALUES ${rows.join(", ")} ${UPSERT_ON_CONFLICT}` };
}

const sqliteTime = (d: Date | null) => (d ? d.toISOString().replace("Z", "+00:00") : null);
const postgresTime = (d: Date | null) => (d ? d.toISOString().slice(0, -1) : null);

const prepared = new WeakMap<Database.Database, Map<string, Statement>>();

/** The connection's prepared statement for `sql` (one of SQLITE's, or an upsert of several rows). */
function statement(connection: Database.Database, which: keyof typeof SQLITE | { sql: string }): Statement {
  let mine = prepared.get(connection);
  if (!mine) prepared.set(connection, (mine = new Map()));
  const sql = typeof which === "string" ? SQLITE[which] : which.sql;
  let s = mine.get(sql);
  if (!s) mine.set(sql, (s = connection.prepare(sql)));
  return s;
}

/** The row (kind, id): its engine payload and when it was consumed; null when there is none. */
export async function findPayload(kind: string, id: string): Promise<FoundPayload | null> {
  const driver = rawDriver();
  let found: { payload: string; consumedAt: number | bigint | null } | undefined;
  if (driver.provider === "sqlite") found = statement(driver.sqlite, "find").get(kind, id) as typeof found;
  else found = (await driver.pool.query({ ...POSTGRES.find, values: [kind, id] })).rows[0];
  if (!found) return null;
  return { payload: found.payload, consumedAt: found.consumedAt === null ? null : new Date(Number(found.consumedAt)) };
}

/** A client's row (clients.server.ts opens its secret): read on every token request. */
export async function findClientRow(clientId: string): Promise<{ metadata: string; secretSealed: string | null } | null> {
  const driver = rawDriver();
  if (driver.provider === "sqlite") return (statement(driver.sqlite, "client").get(clientId) as { metadata: string; secretSealed: string | null } | undefined) ?? null;
  return (await driver.pool.query({ ...POSTGRES.client, values: [clientId] })).rows[0] ?? null;
}

export type AccountRow = { email: string | null; emailVerified: boolean; name: string | null; disabled: boolean };

/** What the engine's findAccount reads of a user (engine.server.ts): on every token request that names one. */
export async function findAccountRow(userId: string): Promise<AccountRow | null> {
  const driver = rawDriver();
  const found = (
    driver.provider === "sqlite" ? statement(driver.sqlite, "account").get(userId) : (await driver.pool.query({ ...POSTGRES.account, values: [userId] })).rows[0]
  ) as { email: string | null; emailVerified: unknown; name: string | null; disabled: unknown } | undefined;
  // SQLite answers 0/1, PostgreSQL booleans.
  return found ? { email: found.email, emailVerified: Boolean(found.emailVerified), name: found.name, disabled: Boolean(found.disabled) } : null;
}

/** Marks the row consumed at `at` unless it already was: ONE conditional update, true for the one caller that did it. */
export function consumePayload(kind: string, id: string, at: Date): Promise<boolean> {
  return rawWrite({
    sqlite: (sqlite) => statement(sqlite, "consume").run(sqliteTime(at), kind, id).changes === 1,
    postgres: async (pool) => (await pool.query({ ...POSTGRES.consume, values: [postgresTime(at), kind, id] })).rowCount === 1,
  });
}

/**
 * Makes the row (kind, id) unconsumed again: a code or refresh token whose answer could not be
 * written (nothing it issued exists) works once more, so the client's retry is not taken for a
 * replay (ADR 180).
 */
export async function releaseConsumed(kind: string, id: string): Promise<void> {
  await rawWrite<unknown>({
    sqlite: (sqlite) => statement(sqlite, "release").run(kind, id),
    postgres: (pool) => pool.query({ ...POSTGRES.release, values: [kind, id] }),
  });
}

/** Writes the row (kind, id), or replaces its columns (never its consumption or creation time) when it is there: one statement, two writers at once included. */
export async function upsertPayload(kind: string, id: string, columns: PayloadColumns): Promise<void> {
  await upsertPayloads([{ kind, id, columns }]);
}

export type PayloadRow = { kind: string; id: string; columns: PayloadColumns };

/**
 * Writes several rows as ONE statement (an upsert of each, as upsertPayload does): all of them or
 * none, and one commit for them all — a token answer's access token, refresh token and kept
 * answer (token-writes.server.ts). A row named twice is written once, as last given.
 */
export async function upsertPayloads(rows: readonly PayloadRow[]): Promise<void> {
  const byKey = new Map(rows.map((row) => [`${row.kind}\u0000${row.id}`, row]));
  const unique = [...byKey.values()];
  if (unique.length === 0) return;
  if (unique.length > ROWS_PER_UPSERT) throw new Error(`at most ${ROWS_PER_UPSERT} rows are written at once (${unique.length} given)`);
  const now = new Date();
  const values = (time: (d: Date | null) => string | null) =>
    unique.flatMap(({ kind, id, columns: c }) => [kind, id, c.payload, c.grantId, c.uid, c.userCode, c.accountId, c.clientId, time(c.expiresAt), time(now)]);
  await rawWrite<unknown>({
    sqlite: (sqlite) => statement(sqlite, sqliteUpsertOf(unique.length)).run(...values(sqliteTime)),
    postgres: (pool) => pool.query({ ...postgresUpsertOf(unique.length), values: values(postgresTime) }),
  });
}
