// The process-wide Prisma client. One model source (prisma/models.prisma) is generated twice, for
// SQLite and for PostgreSQL; both clients have the same models and methods, so the rest of the app
// sees a single type, `Db`, whichever database DATABASE_URL selects.
import { mkdirSync } from "node:fs";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { getConfig } from "../auth/core/config.server.ts";
import { PrismaClient as PostgresClient } from "../../prisma/generated/postgres/client.ts";
import { PrismaClient as SqliteClient } from "../../prisma/generated/sqlite/client.ts";
import { SQLITE_BUSY_TIMEOUT_MS, sqliteFile } from "./location.server.ts";

export type Db = SqliteClient;
export type DbProvider = "sqlite" | "postgres";

type Held = { key: string; client: Db; provider: DbProvider };

// Kept on globalThis so that the Vite dev server re-evaluating this module after an edit reuses
// the open client instead of piling up connections to the same database.
const HELD = Symbol.for("vestibule.db");
const holder = globalThis as typeof globalThis & { [HELD]?: Held };

/**
 * better-sqlite3 opens its connection inside the adapter, so the per-connection settings are
 * applied right after connecting. WAL lets readers in other processes (dev server, scripts, test
 * workers) proceed while one writes; NORMAL sync is safe with WAL (a power cut can lose the last
 * commits, never corrupt the file). Foreign keys must be on for the schema's cascades to work.
 */
class SqliteAdapterFactory extends PrismaBetterSqlite3 {
  override async connect() {
    const adapter = await super.connect();
    await adapter.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
    return adapter;
  }
}

type Target = { key: string; provider: DbProvider; databaseUrl: string | null; dataDir: string; poolMax: number; timeoutMs: number };

function target(): Target {
  const { databaseUrl, dataDir, databasePoolMax: poolMax, databaseTimeoutMs: timeoutMs } = getConfig();
  return databaseUrl
    ? { key: `postgres:${databaseUrl}:${poolMax}:${timeoutMs}`, provider: "postgres", databaseUrl, dataDir, poolMax, timeoutMs }
    : { key: `sqlite:${sqliteFile(dataDir)}`, provider: "sqlite", databaseUrl: null, dataDir, poolMax, timeoutMs };
}

function create(t: Target): Db {
  if (t.databaseUrl) {
    // DATABASE_TIMEOUT_MS bounds each step that can hang on a stalled network or server: opening a
    // connection, waiting for its answer (client side: a black-holed socket never reaches the
    // server's statement_timeout), and the server's own work. A connection whose query timed out
    // is dropped by the pool, so the pool heals once the database answers again (ADR 052).
    const adapter = new PrismaPg({
      connectionString: t.databaseUrl,
      max: t.poolMax,
      connectionTimeoutMillis: t.timeoutMs,
      query_timeout: t.timeoutMs,
      statement_timeout: t.timeoutMs,
      idleTimeoutMillis: 30_000,
    });
    const client = new PostgresClient({ adapter, transactionOptions: { maxWait: t.timeoutMs, timeout: Math.max(t.timeoutMs, 5_000) } });
    // Same models, same delegates: only the generated SQL dialect differs.
    return client as unknown as Db;
  }
  mkdirSync(t.dataDir, { recursive: true });
  return new SqliteClient({
    adapter: new SqliteAdapterFactory({ url: sqliteFile(t.dataDir), timeout: SQLITE_BUSY_TIMEOUT_MS }),
  });
}

/**
 * The Prisma client for the configured database, created on first use. Connections open lazily on
 * the first query. When the configuration changes (tests call resetConfig()), the next call
 * returns a client for the new database and disconnects the old one.
 */
export function db(): Db {
  const t = target();
  const held = holder[HELD];
  if (held?.key === t.key) return held.client;
  if (held) void held.client.$disconnect().catch(() => {});
  const client = create(t);
  holder[HELD] = { key: t.key, client, provider: t.provider };
  return client;
}

/** Which database the current configuration selects. */
export function dbProvider(): DbProvider {
  return getConfig().databaseUrl ? "postgres" : "sqlite";
}

/** Disconnects the process-wide client; the next db() call opens a new one. */
export async function closeDb(): Promise<void> {
  const held = holder[HELD];
  if (!held) return;
  holder[HELD] = undefined;
  await held.client.$disconnect();
}
