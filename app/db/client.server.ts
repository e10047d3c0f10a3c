// The process-wide Prisma client. One model source (prisma/models.prisma) is generated twice, for
// SQLite and for PostgreSQL; both clients have the same models and methods, so the rest of the app
// sees a single type, `Db`, whichever database DATABASE_URL selects.
import { mkdirSync } from "node:fs";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import Database from "better-sqlite3";
import pg from "pg";
import { getConfig } from "../auth/core/config.server.ts";
import { PrismaClient as PostgresClient } from "../../prisma/generated/postgres/client.ts";
import { Prisma, PrismaClient as SqliteClient } from "../../prisma/generated/sqlite/client.ts";
import { SQLITE_BUSY_TIMEOUT_MS, sqliteFile } from "./location.server.ts";
import { foldForSearch } from "./name-search.ts";

export type Db = SqliteClient;

/** Pieces of a raw query whose parts depend on its input; the values stay bound parameters (both dialects). */
export const rawSql = Prisma.sql;
export const rawEmpty = Prisma.empty;
export type DbProvider = "sqlite" | "postgres";

/**
 * The drivers under the client, for the few reads that skip the ORM (session-lookup.server.ts):
 * PostgreSQL's pool is the one the client uses; SQLite gets a connection of its own (only ever reading) to
 * the same file (WAL: it sees every commit of the client's connection), opened on first use.
 */
export type RawDriver = { provider: "postgres"; pool: pg.Pool } | { provider: "sqlite"; sqlite: Database.Database };

// `made` is the generated client class the client was made from: see db().
type Held = { key: string; client: Db; provider: DbProvider; made: unknown; pool?: pg.Pool; file?: string; sqlite?: Database.Database; factory?: SqliteAdapterFactory };

// Kept on globalThis so that the Vite dev server re-evaluating this module after an edit reuses
// the open client instead of piling up connections to the same database — unless the generated
// client changed (`npm run db:generate` under a running `npm run dev`): see db().
const HELD = Symbol.for("vestibule.db");
const holder = globalThis as typeof globalThis & { [HELD]?: Held };

/** Pages of WAL between two checkpoints (4 KiB each: 32 MiB at most). */
export const SQLITE_CHECKPOINT_PAGES = 8_000;
/** What is kept of the WAL file after a checkpoint, in bytes. */
export const SQLITE_WAL_KEPT_BYTES = 64 * 1024 * 1024;

/**
 * better-sqlite3 opens its connection inside the adapter, so the per-connection settings are
 * applied right after connecting. WAL lets readers in other processes (dev server, scripts, test
 * workers) proceed while one writes; NORMAL sync is safe with WAL (a power cut can lose the last
 * commits, never corrupt the file). Foreign keys must be on for the schema's cascades to work.
 * The WAL is copied back into the database (a checkpoint, by the commit that passes the bound)
 * every SQLITE_CHECKPOINT_PAGES pages rather than SQLite's 1 000: a page written again before
 * then is copied once — the OAuth payload table's index pages are, refresh after refresh (ADR 180);
 * a WAL grown past SQLITE_WAL_KEPT_BYTES is cut back to it after a checkpoint.
 */
class SqliteAdapterFactory extends PrismaBetterSqlite3 {
  /** The client's own connection, once it has opened it (rawWriter). */
  connection: Database.Database | null = null;

  /** The ORM's transactions begun or beginning on the connection and not yet ended. */
  transactions = 0;
  #idle: { promise: Promise<void>; resolve: () => void } | null = null;

  /** Settles once no transaction of the ORM is open on the connection (at once when none is). */
  idle(): Promise<void> {
    if (this.transactions === 0) return Promise.resolve();
    if (!this.#idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#idle = { promise, resolve };
    }
    return this.#idle.promise;
  }

  #ended() {
    this.transactions--;
    if (this.transactions === 0 && this.#idle) {
      this.#idle.resolve();
      this.#idle = null;
    }
  }

  override async connect() {
    const adapter = await super.connect();
    // The adapter's transactions are counted from the moment one is asked for (its BEGIN waits
    // for the adapter's own lock) to its commit or rollback: a statement written on the
    // connection itself while one is open would be part of it, and undone by its rollback
    // (rawWrite).
    const start = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => {
      this.transactions++;
      let open = true;
      const end = () => {
        if (!open) return;
        open = false;
        this.#ended();
      };
      try {
        const transaction = await start(isolationLevel);
        const commit = transaction.commit.bind(transaction);
        const rollback = transaction.rollback.bind(transaction);
        transaction.commit = () => commit().finally(end);
        transaction.rollback = () => rollback().finally(end);
        return transaction;
      } catch (error) {
        end();
        throw error;
      }
    };
    await adapter.executeScript(
      `PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = ${SQLITE_CHECKPOINT_PAGES}; PRAGMA journal_size_limit = ${SQLITE_WAL_KEPT_BYTES};`,
    );
    // The adapter's better-sqlite3 handle (a public field of its queryable, not in its types).
    this.connection = (adapter as unknown as { client?: Database.Database }).client ?? null;
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

function create(t: Target): Held {
  if (t.databaseUrl) {
    // DATABASE_TIMEOUT_MS bounds each step that can hang on a stalled network or server: opening a
    // connection, waiting for its answer (client side: a black-holed socket never reaches the
    // server's statement_timeout), and the server's own work. A connection whose query timed out
    // is dropped by the pool, so the pool heals once the database answers again (ADR 052).
    // The pool is ours so that the raw session reads (session-lookup.server.ts) share it and its
    // bounds; the adapter listens for its idle-client errors and ends it when the client disconnects.
    const pool = new pg.Pool({
      connectionString: t.databaseUrl,
      max: t.poolMax,
      connectionTimeoutMillis: t.timeoutMs,
      query_timeout: t.timeoutMs,
      statement_timeout: t.timeoutMs,
      idleTimeoutMillis: 30_000,
    });
    const client = new PostgresClient({
      adapter: new PrismaPg(pool, { disposeExternalPool: true }),
      transactionOptions: { maxWait: t.timeoutMs, timeout: Math.max(t.timeoutMs, 5_000) },
    });
    // Same models, same delegates: only the generated SQL dialect differs.
    return { key: t.key, client: withNameSearch(client as unknown as Db), provider: t.provider, made: PostgresClient, pool };
  }
  mkdirSync(t.dataDir, { recursive: true });
  const file = sqliteFile(t.dataDir);
  const factory = new SqliteAdapterFactory({ url: file, timeout: SQLITE_BUSY_TIMEOUT_MS });
  const client = new SqliteClient({ adapter: factory });
  return { key: t.key, client: withNameSearch(client), provider: t.provider, made: SqliteClient, file, factory };
}

type UserData = Record<string, unknown>;

/** `data` with User.nameSearch set from the `name` it writes, if it writes one. */
function withFoldedName<D>(data: D): D {
  if (!data || typeof data !== "object" || !("name" in data)) return data;
  const written = (data as UserData).name;
  const name = written && typeof written === "object" && "set" in written ? (written as { set: unknown }).set : written;
  if (name === undefined) return data;
  return { ...data, nameSearch: typeof name === "string" ? foldForSearch(name) : null };
}

const foldEach = <D>(data: D): D => (Array.isArray(data) ? (data.map(withFoldedName) as D) : withFoldedName(data));

/**
 * Every write of a user's name also writes its folded copy (User.nameSearch, ADR 085), here in
 * one place rather than in each flow that names a user (sign-up, OAuth, the profile form, the CLI).
 */
export function withNameSearch(client: Db): Db {
  return client.$extends({
    query: {
      user: {
        create: ({ args, query }) => query({ ...args, data: withFoldedName(args.data) }),
        update: ({ args, query }) => query({ ...args, data: withFoldedName(args.data) }),
        upsert: ({ args, query }) => query({ ...args, create: withFoldedName(args.create), update: withFoldedName(args.update) }),
        createMany: ({ args, query }) => query({ ...args, data: foldEach(args.data) }),
        createManyAndReturn: ({ args, query }) => query({ ...args, data: foldEach(args.data) }),
        updateMany: ({ args, query }) => query({ ...args, data: withFoldedName(args.data) }),
        updateManyAndReturn: ({ args, query }) => query({ ...args, data: withFoldedName(args.data) }),
      },
    },
  }) as unknown as Db;
}

/**
 * The Prisma client for the configured database, created on first use. Connections open lazily on
 * the first query. When the configuration changes (tests call resetConfig()), the next call
 * returns a client for the new database and disconnects the old one. So it does when the held
 * client was made from another evaluation of the generated client: `npm run db:generate` rewrites
 * prisma/generated, the dev server re-evaluates it and this module, and the next request gets the
 * new models (a new table's delegate, `db().note`) without restarting `npm run dev`.
 */
export function db(): Db {
  const t = target();
  const held = holder[HELD];
  if (held?.key === t.key && held.made === (t.provider === "postgres" ? PostgresClient : SqliteClient)) return held.client;
  if (held) release(held);
  const next = create(t);
  holder[HELD] = next;
  return next.client;
}

function release(held: Held) {
  held.sqlite?.close();
  void held.client.$disconnect().catch(() => {});
}

/** The driver under the current client (see RawDriver). */
export function rawDriver(): RawDriver {
  db();
  const held = holder[HELD]!;
  if (held.pool) return { provider: "postgres", pool: held.pool };
  if (!held.sqlite) {
    held.sqlite = new Database(held.file!, { fileMustExist: true, timeout: SQLITE_BUSY_TIMEOUT_MS });
  }
  return { provider: "sqlite", sqlite: held.sqlite };
}

/**
 * The driver for the few writes that skip the ORM (the OAuth engine's hot rows,
 * app/auth/provider/payload-store.server.ts). PostgreSQL: the client's pool. SQLite: the client's
 * own connection, never a second one: better-sqlite3 blocks the event loop while it waits for
 * the write lock, so a second connection waiting on a transaction the client holds across an
 * await would wait out the busy timeout. Writes go through rawWrite, which keeps them out of the
 * ORM's open transactions on that connection.
 */
export async function rawWriter(): Promise<RawDriver> {
  const client = db();
  const held = holder[HELD]!;
  if (held.pool) return { provider: "postgres", pool: held.pool };
  if (!held.factory!.connection) await client.$connect();
  const connection = held.factory!.connection;
  if (!connection) throw new Error("the SQLite client opened no connection");
  return { provider: "sqlite", sqlite: connection };
}

/**
 * One write that skips the ORM, on the driver rawWriter gives: `postgres` with the pool, or
 * `sqlite` with the client's own connection — once no transaction of the ORM is open on it, and
 * synchronously after that check, so none begins in between. The adapter runs a statement sent
 * outside a transaction on that connection at once: inside whatever transaction another request
 * holds open there across an await, committed or rolled back with it. A token answer's rows and
 * a consume must never be undone by another request's rollback (ADR 180).
 */
export async function rawWrite<T>(write: { sqlite: (connection: Database.Database) => T; postgres: (pool: pg.Pool) => Promise<T> }): Promise<T> {
  const driver = await rawWriter();
  if (driver.provider === "postgres") return write.postgres(driver.pool);
  const factory = holder[HELD]!.factory!;
  while (factory.transactions > 0) await factory.idle();
  return write.sqlite(driver.sqlite);
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
  held.sqlite?.close();
  await held.client.$disconnect();
}

/**
 * The PostgreSQL pool's connections right now (for /metrics), or null on SQLite or before the
 * first query: reading it never opens a client.
 */
export function poolUse(): { total: number; idle: number; waiting: number; max: number } | null {
  const pool = holder[HELD]?.pool;
  if (!pool) return null;
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 0 };
}
