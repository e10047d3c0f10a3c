// Database helpers for tests. Each test file already starts with its own migrated database
// (setup-env.ts); resetDatabase() empties it between tests that need a clean slate.
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { getConfig } from "../../app/auth/config.server.ts";
import { db, dbProvider } from "../../app/db/client.server.ts";
import { Prisma } from "../../prisma/generated/sqlite/client.ts";
import { databaseUrl as databaseUrlFor } from "./postgres.ts";

export const testDb = db;

/** "sqlite" or "postgres": which project this worker belongs to, for test names. */
export const dbLabel: "sqlite" | "postgres" = process.env.VESTIBULE_TEST_DB === "postgres" ? "postgres" : "sqlite";

/**
 * Every table of the schema, from the generated client, so a new model is emptied without edits
 * here. No model uses @@map, so table names are model names (the schema test checks that).
 */
export function modelTables(): string[] {
  return Object.values(Prisma.ModelName);
}

/**
 * Deletes every row of every model, keeping the schema and `_prisma_migrations`.
 * PostgreSQL: one TRUNCATE … CASCADE. SQLite: DELETEs in one transaction with foreign-key checks
 * deferred to the commit, so the order of the tables does not matter and no row can be orphaned.
 */
export async function resetDatabase(): Promise<void> {
  const client = db();
  const tables = modelTables().map((t) => `"${t}"`);
  if (dbProvider() === "postgres") {
    await client.$executeRawUnsafe(`TRUNCATE TABLE ${tables.join(", ")} RESTART IDENTITY CASCADE`);
    return;
  }
  await client.$transaction([
    client.$executeRawUnsafe("PRAGMA defer_foreign_keys = ON"),
    ...tables.map((t) => client.$executeRawUnsafe(`DELETE FROM ${t}`)),
  ]);
}

export type ScratchDatabase = {
  /** Pass to migrate(): a postgresql:// URL, or null for SQLite in `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  drop(): Promise<void>;
};

let scratchCount = 0;

/**
 * A new, empty database of this worker's kind, apart from the worker's own (for tests that
 * migrate from nothing). Named after the worker's database so the run's teardown drops it even
 * when a test fails before calling drop().
 */
export async function scratchDatabase(): Promise<ScratchDatabase> {
  const n = ++scratchCount;
  const { databaseUrl, dataDir } = getConfig();
  if (!databaseUrl) {
    const dir = path.join(dataDir, "scratch", String(n));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return { databaseUrl: null, dataDir: dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `${new URL(databaseUrl).pathname.slice(1)}_s${n}`;
  const adminUrl = databaseUrlFor(databaseUrl, "postgres");
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
  return {
    databaseUrl: databaseUrlFor(databaseUrl, name),
    dataDir,
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

async function adminQuery(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
