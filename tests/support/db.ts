// Database helpers for tests. Each test file already starts with its own migrated database
// (setup-env.ts); resetDatabase() empties it between tests that need a clean slate.
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { getConfig } from "../../app/auth/core/config.server.ts";
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
 * Deletes every row of every model, keeping the schema and `_prisma_migrations`; one transaction.
 * SQLite: foreign-key checks are deferred to the commit, so the order does not matter.
 * PostgreSQL: referencing tables are emptied before the tables they reference (TRUNCATE would
 * do it in one statement but takes ~40 ms against ~3 ms for these DELETEs).
 */
export async function resetDatabase(): Promise<void> {
  const client = db();
  if (dbProvider() === "postgres") {
    const order = await postgresDeleteOrder();
    await client.$transaction(order.map((t) => client.$executeRawUnsafe(`DELETE FROM "${t}"`)));
    return;
  }
  await client.$transaction([
    client.$executeRawUnsafe("PRAGMA defer_foreign_keys = ON"),
    ...modelTables().map((t) => client.$executeRawUnsafe(`DELETE FROM "${t}"`)),
  ]);
}

let deleteOrder: { key: string; order: Promise<string[]> } | null = null;

/** Model tables ordered so that every table comes before the tables its foreign keys point to. */
function postgresDeleteOrder(): Promise<string[]> {
  const key = getConfig().databaseUrl ?? "";
  if (deleteOrder?.key === key) return deleteOrder.order;
  const order = (async () => {
    const edges = await db().$queryRawUnsafe<{ child: string; parent: string }[]>(
      `SELECT cl.relname AS child, ref.relname AS parent
         FROM pg_constraint con
         JOIN pg_class cl ON cl.oid = con.conrelid
         JOIN pg_class ref ON ref.oid = con.confrelid
         JOIN pg_namespace n ON n.oid = cl.relnamespace
        WHERE con.contype = 'f' AND n.nspname = current_schema() AND cl.relname <> ref.relname`,
    );
    const remaining = new Set(modelTables());
    const sorted: string[] = [];
    while (remaining.size) {
      // A table can go once no remaining table still references it.
      const next = [...remaining].find((t) => !edges.some((e) => e.parent === t && e.child !== t && remaining.has(e.child)));
      if (!next) throw new Error(`resetDatabase: foreign keys form a cycle among ${[...remaining].join(", ")}`);
      sorted.push(next);
      remaining.delete(next);
    }
    return sorted;
  })();
  deleteOrder = { key, order };
  return order;
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
