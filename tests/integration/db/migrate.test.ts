// The migration runner against real databases: a fresh one per test (SQLite file or PostgreSQL
// database), the committed migrations or a temporary folder built from them.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, test } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { sqliteFile } from "../../../app/db/location.server.ts";
import { defaultMigrationsDir, migrate, MigrationError } from "../../../app/db/migrate.server.ts";
import { dbLabel, scratchDatabase, type ScratchDatabase } from "../../support/db.ts";
import { TEST_AUTH_SECRET } from "../../support/env.ts";

const run = promisify(execFile);
const provider = dbLabel;
const committedDir = defaultMigrationsDir(provider);
const committed = readdirSync(committedDir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

type MigrationRow = { migration_name: string; checksum: string; finished_at: unknown; rolled_back_at: unknown; logs: string | null; applied_steps_count: number };

async function sql<T>(target: ScratchDatabase, query: string): Promise<T[]> {
  if (target.databaseUrl) {
    const client = new pg.Client({ connectionString: target.databaseUrl });
    await client.connect();
    try {
      return (await client.query(query)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const sqlite = new Database(sqliteFile(target.dataDir));
  try {
    const stmt = sqlite.prepare(query);
    return (stmt.reader ? stmt.all() : (stmt.run(), [])) as T[];
  } finally {
    sqlite.close();
  }
}

const rows = (target: ScratchDatabase) =>
  sql<MigrationRow>(target, 'SELECT migration_name, checksum, finished_at, rolled_back_at, logs, applied_steps_count FROM "_prisma_migrations" ORDER BY started_at, migration_name');

async function tables(target: ScratchDatabase): Promise<string[]> {
  const list = target.databaseUrl
    ? await sql<{ name: string }>(target, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")
    : await sql<{ name: string }>(target, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  return list.map((t) => t.name).sort();
}

/** A migrations folder of our own: the committed ones plus whatever a test adds. */
function migrationsCopy(target: ScratchDatabase, extra: Record<string, string> = {}): string {
  const dir = path.join(target.dataDir, `migrations-${Math.random().toString(36).slice(2, 8)}`);
  cpSync(committedDir, dir, { recursive: true });
  for (const [name, text] of Object.entries(extra)) {
    mkdirSync(path.join(dir, name), { recursive: true });
    writeFileSync(path.join(dir, name, "migration.sql"), text);
  }
  return dir;
}

const scratches: ScratchDatabase[] = [];
async function fresh() {
  const s = await scratchDatabase();
  scratches.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(scratches.splice(0).map((s) => s.drop()));
});

describe(`migrate() on ${dbLabel}`, () => {
  test("applies every committed migration to an empty database, then has nothing to do", async () => {
    expect(committed.length).toBeGreaterThan(0);
    const target = await fresh();
    const lines: string[] = [];

    const first = await migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, log: (l) => lines.push(l) });
    expect(first.applied).toEqual(committed);
    expect(lines).toEqual(committed.map((n) => `applied ${n}`));

    const recorded = await rows(target);
    expect(recorded.map((r) => r.migration_name)).toEqual(committed);
    for (const r of recorded) {
      const bytes = readFileSync(path.join(committedDir, r.migration_name, "migration.sql"));
      expect(r.checksum).toBe(createHash("sha256").update(bytes).digest("hex"));
      expect(r.finished_at).not.toBeNull();
      expect(r.rolled_back_at).toBeNull();
      expect(Number(r.applied_steps_count)).toBe(1);
    }
    expect(await tables(target)).toEqual(expect.arrayContaining(["User", "Account", "Session", "VerificationToken", "_prisma_migrations"]));

    lines.length = 0;
    const second = await migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, log: (l) => lines.push(l) });
    expect(second.applied).toEqual([]);
    expect(lines).toEqual([]);
    expect((await rows(target)).length).toBe(committed.length);
  });

  test("applies only the migrations added since the last run, in name order", async () => {
    const target = await fresh();
    const dir = migrationsCopy(target);
    await migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, migrationsDir: dir, log: () => {} });

    const later = {
      "29990101000002_second": 'CREATE TABLE "Second" ("id" INTEGER NOT NULL PRIMARY KEY);\n',
      "29990101000001_first": 'CREATE TABLE "First" ("id" INTEGER NOT NULL PRIMARY KEY);\n',
    };
    for (const [name, text] of Object.entries(later)) {
      mkdirSync(path.join(dir, name));
      writeFileSync(path.join(dir, name, "migration.sql"), text);
    }
    const { applied } = await migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, migrationsDir: dir, log: () => {} });
    expect(applied).toEqual(["29990101000001_first", "29990101000002_second"]);
    expect(await tables(target)).toEqual(expect.arrayContaining(["First", "Second"]));
  });

  test("warns when an applied migration was edited afterwards, and does not re-run it", async () => {
    const target = await fresh();
    const dir = migrationsCopy(target);
    await migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, migrationsDir: dir, log: () => {} });

    const file = path.join(dir, committed[0]!, "migration.sql");
    writeFileSync(file, readFileSync(file, "utf8") + "\n-- edited after it was applied\n");
    const lines: string[] = [];
    const { applied } = await migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, migrationsDir: dir, log: (l) => lines.push(l) });
    expect(applied).toEqual([]);
    expect(lines).toEqual([`warning: ${committed[0]}/migration.sql was modified after it was applied (checksum differs)`]);
  });

  test("a failed migration is recorded with its error and blocks every later run until resolved", async () => {
    const target = await fresh();
    const broken = "29990101000001_broken";
    const after = "29990101000002_after";
    const dir = migrationsCopy(target, {
      [broken]: 'CREATE TABLE "Partial" ("id" INTEGER NOT NULL);\nINSERT INTO "NoSuchTable" VALUES (1);\n',
      [after]: 'CREATE TABLE "After" ("id" INTEGER NOT NULL);\n',
    });
    const opts = { databaseUrl: target.databaseUrl, dataDir: target.dataDir, migrationsDir: dir, log: () => {} };

    const firstRun = migrate(opts);
    await expect(firstRun).rejects.toBeInstanceOf(MigrationError);
    await expect(firstRun).rejects.toThrow(new RegExp(`^migration ${broken} failed: .*NoSuchTable`));

    const failedRow = (await rows(target)).find((r) => r.migration_name === broken)!;
    expect(failedRow.finished_at).toBeNull();
    expect(failedRow.rolled_back_at).toBeNull();
    expect(failedRow.logs).toMatch(/NoSuchTable/);
    expect((await rows(target)).map((r) => r.migration_name)).not.toContain(after);

    // PostgreSQL ran the script as one implicit transaction; SQLite kept what ran before the error.
    expect((await tables(target)).includes("Partial")).toBe(provider === "sqlite");

    const secondRun = migrate(opts);
    await expect(secondRun).rejects.toBeInstanceOf(MigrationError);
    const message = await secondRun.then(
      () => "",
      (e: Error) => e.message,
    );
    expect(message).toContain("no further migrations are applied");
    expect(message).toContain(`- ${broken}: `);
    expect(message).not.toMatch(/\n\s+at /);
    expect((await tables(target)).includes("After")).toBe(false);

    // Resolving as the message says: undo, fix the script, mark the failed row rolled back.
    if (provider === "sqlite") await sql(target, 'DROP TABLE "Partial"');
    writeFileSync(path.join(dir, broken, "migration.sql"), 'CREATE TABLE "Partial" ("id" INTEGER NOT NULL);\n');
    const update = /^\s*(UPDATE "_prisma_migrations" .*;)$/m.exec(message)?.[1];
    expect(update).toBeDefined();
    await sql(target, update!);

    const { applied } = await migrate(opts);
    expect(applied).toEqual([broken, after]);
    expect(await tables(target)).toEqual(expect.arrayContaining(["Partial", "After"]));
  });

  test("refuses a migrations folder locked to the other provider, or one without a lock file", async () => {
    const target = await fresh();
    const dir = migrationsCopy(target);
    const other = provider === "sqlite" ? "postgresql" : "sqlite";
    writeFileSync(path.join(dir, "migration_lock.toml"), `provider = "${other}"\n`);
    await expect(migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, migrationsDir: dir, log: () => {} })).rejects.toThrow(
      `is for provider "${other}"`,
    );
    await expect(
      migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, migrationsDir: path.join(dir, committed[0]!), log: () => {} }),
    ).rejects.toThrow("no migration_lock.toml");
    expect((await tables(target)).includes("User")).toBe(false);
  });

  test("calls made at the same time in one process apply each migration once", async () => {
    const target = await fresh();
    const results = await Promise.all(
      [1, 2, 3].map(() => migrate({ databaseUrl: target.databaseUrl, dataDir: target.dataDir, log: () => {} })),
    );
    expect(results.map((r) => r.applied)).toEqual([committed, [], []]);
    expect((await rows(target)).length).toBe(committed.length);
  });
});

describe(`npm run db:migrate on ${dbLabel}`, () => {
  const root = fileURLToPath(new URL("../../..", import.meta.url));
  const tsx = createRequire(import.meta.url).resolve("tsx/cli");
  const script = (env: Record<string, string>) =>
    run(process.execPath, [tsx, "scripts/migrate.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NODE_ENV: "test", AUTH_SECRET: TEST_AUTH_SECRET, ...env },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  test("two processes started together apply each migration exactly once", async () => {
    const target = await fresh();
    const env: Record<string, string> = target.databaseUrl ? { DATABASE_URL: target.databaseUrl } : { VESTIBULE_DATA_DIR: target.dataDir };
    const [a, b] = await Promise.all([script(env), script(env)]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const outputs = [a.stdout, b.stdout].sort();
    const summary = `${committed.length} migration(s) applied`;
    expect(outputs.filter((o) => o.includes(summary))).toHaveLength(1);
    expect(outputs.filter((o) => o.includes("no pending migrations"))).toHaveLength(1);
    expect((await rows(target)).map((r) => r.migration_name)).toEqual(committed);
  });

  test.runIf(provider === "sqlite")("reports invalid configuration by name, without a stack trace", async () => {
    const r = await script({ DATABASE_URL: "mysql://localhost/app", VESTIBULE_DATA_DIR: getConfig().dataDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("DATABASE_URL must be a postgresql:// URL");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  test.runIf(provider === "postgres")("reports an unreachable server in one line, without a stack trace", async () => {
    const r = await script({ DATABASE_URL: "postgresql://postgres:secret@127.0.0.1:1/nowhere" });
    expect(r.code).toBe(1);
    // The database it used first (ADR 107), then the failure.
    expect(r.stderr.trim()).toMatch(/^db:migrate: database: PostgreSQL nowhere on 127\.0\.0\.1:1 as postgres\ndb:migrate: cannot connect to PostgreSQL \(postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/nowhere\): .*ECONNREFUSED/);
    expect(r.stderr).not.toContain("secret");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
