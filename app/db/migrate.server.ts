// Applies the committed Prisma migrations (prisma/<provider>/migrations) and records them in
// `_prisma_migrations` exactly as `prisma migrate deploy` would, so the Prisma CLI on a machine that
// can download its schema engine reads the same history. The Prisma 7 CLI cannot migrate here (its
// schema engine is a binary download); see docs/decisions/001-database.md.
//
// Talks to the databases with better-sqlite3 and pg directly: no Prisma client is involved, so a
// migration can never depend on a generated client that already expects the new schema.
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { getConfig } from "../auth/core/config.server.ts";
import { SQLITE_BUSY_TIMEOUT_MS, sqliteFile } from "./location.server.ts";

export type MigrateOptions = {
  /** postgresql://… or null for SQLite; default: getConfig().databaseUrl. */
  databaseUrl?: string | null;
  /** Folder of the SQLite database; default: getConfig().dataDir. */
  dataDir?: string;
  /** Where the migration folders are; default: prisma/<sqlite|postgres>/migrations of this repo. */
  migrationsDir?: string;
  /** Progress and warnings, one line each; default: console.log. */
  log?: (line: string) => void;
  /** How long connecting to PostgreSQL may take, in ms; default: PG_CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number;
};

/** An expected failure (bad lock file, failed migration, …): report `message`, not a stack trace. */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationError";
  }
}

/** Key of the session-level advisory lock; the same one Prisma's own engine takes for migrations. */
export const PG_MIGRATION_LOCK_KEY = 72707369;

/** How long a second migrating process waits for the first before giving up. */
const SQLITE_LOCK_WAIT_MS = 120_000;

type Provider = "sqlite" | "postgres";
type Migration = { name: string; sql: string; checksum: string };
type Row = { id: string; migration_name: string; checksum: string; finished_at: unknown; rolled_back_at: unknown; logs: string | null };

interface Connection {
  exec(sql: string): Promise<void>;
  rows(): Promise<Row[]>;
  start(id: string, m: Migration): Promise<void>;
  fail(id: string, logs: string): Promise<void>;
  finish(id: string): Promise<void>;
  close(): Promise<void>;
}

const PRISMA_MIGRATIONS_DDL: Record<Provider, string> = {
  sqlite:
    'CREATE TABLE IF NOT EXISTS "_prisma_migrations" ("id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME, "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME, "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0);',
  postgres:
    'CREATE TABLE IF NOT EXISTS "_prisma_migrations" ("id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ, "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ, "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0);',
};

const ROWS_SQL =
  'SELECT id, migration_name, checksum, finished_at, rolled_back_at, logs FROM "_prisma_migrations" ORDER BY started_at, migration_name';

/** The repository's migrations folder for a provider, found from this module or from the cwd. */
export function defaultMigrationsDir(provider: Provider): string {
  const rel = path.join("prisma", provider, "migrations");
  // Walking up works from app/db/ (source, tsx, vitest) and from build/server/ (the SSR bundle).
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, rel, "migration_lock.toml"))) return path.join(dir, rel);
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return path.resolve(rel);
}

/** Reads and checks the migration folders: lock file provider, then every `<name>/migration.sql` in name order. */
export function readMigrations(dir: string, provider: Provider): Migration[] {
  const lockFile = path.join(dir, "migration_lock.toml");
  if (!existsSync(lockFile)) throw new MigrationError(`no migration_lock.toml in ${dir}: not a Prisma migrations folder`);
  const locked = /^\s*provider\s*=\s*"([^"]+)"/m.exec(readFileSync(lockFile, "utf8"))?.[1];
  const expected = provider === "postgres" ? "postgresql" : "sqlite";
  if (locked !== expected) {
    throw new MigrationError(`${lockFile} is for provider "${locked ?? "(none)"}", but the database is ${expected}`);
  }
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      // Prisma checksums the raw bytes; decoding first would change the hash of a file with a BOM or CRLFs.
      const bytes = readFileSync(path.join(dir, name, "migration.sql"));
      return { name, sql: bytes.toString("utf8"), checksum: createHash("sha256").update(bytes).digest("hex") };
    });
}

/**
 * Applies pending migrations; returns the names applied in this call (empty when up to date).
 * Safe to run from several processes at once: PostgreSQL serialises on an advisory lock, SQLite
 * on an exclusive lock held on a sidecar file for the whole run.
 */
export async function migrate(opts: MigrateOptions = {}): Promise<{ applied: string[] }> {
  // Calls in one process take turns before reaching the cross-process lock: a second SQLite
  // caller would otherwise block the event loop in its busy wait while the first cannot finish.
  const turn = inProcess.then(() => run(opts));
  inProcess = turn.then(
    () => {},
    () => {},
  );
  return turn;
}

let inProcess: Promise<void> = Promise.resolve();

async function run(opts: MigrateOptions): Promise<{ applied: string[] }> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const databaseUrl = opts.databaseUrl !== undefined ? opts.databaseUrl : getConfig().databaseUrl;
  const provider: Provider = databaseUrl ? "postgres" : "sqlite";
  const dir = opts.migrationsDir ?? defaultMigrationsDir(provider);
  const migrations = readMigrations(dir, provider);

  const conn = databaseUrl
    ? await openPostgres(databaseUrl, opts.connectTimeoutMs ?? PG_CONNECT_TIMEOUT_MS)
    : openSqlite(opts.dataDir ?? getConfig().dataDir);
  try {
    await conn.exec(PRISMA_MIGRATIONS_DDL[provider]);
    const rows = await conn.rows();

    const failed = rows.filter((r) => r.finished_at == null && r.rolled_back_at == null);
    if (failed.length) throw new MigrationError(failedMessage(failed, provider));

    const applied = new Map<string, string>();
    for (const r of rows) if (r.finished_at != null && r.rolled_back_at == null) applied.set(r.migration_name, r.checksum);

    const known = new Set(migrations.map((m) => m.name));
    for (const name of applied.keys()) {
      if (!known.has(name)) log(`warning: ${name} is recorded as applied but is not in ${dir}`);
    }

    const done: string[] = [];
    for (const m of migrations) {
      const checksum = applied.get(m.name);
      if (checksum !== undefined) {
        if (checksum !== m.checksum) log(`warning: ${m.name}/migration.sql was modified after it was applied (checksum differs)`);
        continue;
      }
      const id = randomUUID();
      await conn.start(id, m);
      try {
        // SQLite scripts run as-is, without BEGIN/COMMIT: Prisma's table rebuilds switch
        // `PRAGMA foreign_keys`, which is ignored inside a transaction. A multi-statement
        // PostgreSQL script is one implicit transaction, so a failure there leaves no partial DDL.
        await conn.exec(m.sql);
      } catch (e) {
        const reason = e instanceof Error ? e.message : String(e);
        await conn.fail(id, e instanceof Error && e.stack ? e.stack : reason);
        throw new MigrationError(
          `migration ${m.name} failed: ${reason}\n` +
            `It is recorded as failed in _prisma_migrations; later runs refuse to continue until it is resolved.`,
        );
      }
      await conn.finish(id);
      log(`applied ${m.name}`);
      done.push(m.name);
    }
    return { applied: done };
  } finally {
    await conn.close();
  }
}

function failedMessage(failed: Row[], provider: Provider): string {
  const now = provider === "postgres" ? "now()" : "strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')";
  const lines = failed.map((r) => {
    const first = (r.logs ?? "").split("\n")[0]?.trim();
    return `  - ${r.migration_name}${first ? `: ${first}` : ""}`;
  });
  return [
    `the database has ${failed.length === 1 ? "a failed migration" : "failed migrations"}; no further migrations are applied until ${failed.length === 1 ? "it is" : "they are"} resolved:`,
    ...lines,
    "Undo whatever the failed migration changed, then mark it rolled back so it is retried:",
    `  UPDATE "_prisma_migrations" SET rolled_back_at = ${now} WHERE migration_name = '${failed[0]!.migration_name}' AND finished_at IS NULL;`,
    `(with the Prisma CLI available: prisma migrate resolve --rolled-back "${failed[0]!.migration_name}")`,
  ].join("\n");
}

/**
 * How long connecting may take by default (a command's migration): a server that accepts the
 * connection and never answers must not hold a start. The server passes its DATABASE_TIMEOUT_MS
 * (app/entry.server.tsx), the bound of every other connection it opens, so a starting instance is
 * held no longer than that before it listens (docs/decisions/106); it then waits for the database,
 * listening, and tries again.
 */
const PG_CONNECT_TIMEOUT_MS = 10_000;

async function openPostgres(url: string, connectTimeoutMs: number): Promise<Connection> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  // An error on the idle connection (server restart) must not crash the process; the next query reports it.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    throw new MigrationError(`cannot connect to PostgreSQL (${redact(url)}): ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    // Held for the whole run: a second instance starting at the same time waits here, then finds
    // nothing pending.
    await client.query("SELECT pg_advisory_lock($1)", [PG_MIGRATION_LOCK_KEY]);
  } catch (e) {
    await client.end().catch(() => {});
    throw e;
  }
  return {
    exec: async (sql) => {
      await client.query(sql);
    },
    rows: async () => (await client.query<Row>(ROWS_SQL)).rows,
    start: async (id, m) => {
      await client.query(
        'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
        [id, m.checksum, m.name],
      );
    },
    fail: async (id, logs) => {
      await client.query('UPDATE "_prisma_migrations" SET logs = $1 WHERE id = $2', [logs, id]);
    },
    finish: async (id) => {
      await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
    },
    close: async () => {
      try {
        await client.query("SELECT pg_advisory_unlock($1)", [PG_MIGRATION_LOCK_KEY]);
      } finally {
        await client.end();
      }
    },
  };
}

function openSqlite(dataDir: string): Connection {
  mkdirSync(dataDir, { recursive: true });
  const file = sqliteFile(dataDir);

  // Two processes must not both see a migration as pending and both run it. The scripts cannot
  // run inside one transaction (see above), so the mutex is an exclusive transaction on a sidecar
  // database: SQLite waits for it with its busy timeout, and the OS releases it if the holder dies.
  const lock = new Database(`${file}.migrate-lock`, { timeout: SQLITE_LOCK_WAIT_MS });
  try {
    lock.exec("BEGIN EXCLUSIVE");
  } catch (e) {
    lock.close();
    const busy = (e as { code?: string }).code?.startsWith("SQLITE_BUSY");
    throw new MigrationError(
      busy
        ? `another process has been migrating ${file} for over ${SQLITE_LOCK_WAIT_MS / 1000} s; try again when it has finished`
        : `cannot lock ${file} for migration: ${(e as Error).message}`,
    );
  }

  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, { timeout: SQLITE_BUSY_TIMEOUT_MS });
    sqlite.pragma("journal_mode = WAL");
  } catch (e) {
    lock.close();
    throw new MigrationError(`cannot open ${file}: ${(e as Error).message}`);
  }
  // Prisma's engine writes SQLite timestamps as RFC 3339 text with an explicit UTC offset.
  const now = () => new Date().toISOString().replace("Z", "+00:00");
  return {
    exec: async (sql) => {
      sqlite.exec(sql);
    },
    rows: async () => sqlite.prepare(ROWS_SQL).all() as Row[],
    start: async (id, m) => {
      sqlite
        .prepare('INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, 0)')
        .run(id, m.checksum, m.name, now());
    },
    fail: async (id, logs) => {
      sqlite.prepare('UPDATE "_prisma_migrations" SET logs = ? WHERE id = ?').run(logs, id);
    },
    finish: async (id) => {
      sqlite.prepare('UPDATE "_prisma_migrations" SET finished_at = ?, applied_steps_count = 1 WHERE id = ?').run(now(), id);
    },
    close: async () => {
      try {
        sqlite.close();
      } finally {
        lock.close();
      }
    },
  };
}

/** A connection URL without its password, for error messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}
