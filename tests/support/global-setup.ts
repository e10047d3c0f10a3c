// Runs in the Vitest main process before any test file: builds migrated template databases once,
// so each test worker starts from a copy instead of running the migrations itself.
//
//   SQLite:     .data/test/<run>/template/vestibule.db, copied into each worker's data folder.
//   PostgreSQL: database vestibule_test_<run>_template, cloned with CREATE DATABASE … TEMPLATE
//               into vestibule_test_<run>_<worker> (tests/support/setup-env.ts).
//
// <run> is this Vitest process's pid, so that two test runs on one machine (two people in one
// working tree, another branch's checkout, a watch session beside a one-off run) never share,
// rebuild or drop each other's templates and databases: a shared template would be rebuilt from
// whichever migrations the last run had. Leftovers of runs that died are removed at the next start.
//
// Vitest 5 runs the root config's globalSetup once per run (projects with `extends: true` do
// not inherit it); it builds what the selected projects need and hands it to every worker through
// provide()/inject().
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migrate } from "../../app/db/migrate.server.ts";
import { sqliteFile } from "../../app/db/location.server.ts";
import { ADMIN_URL, databaseUrl, describeServer, RUN_DATABASE_PATTERN, runDatabasePrefix } from "./postgres.ts";

export type PostgresTestTarget =
  | { available: true; adminUrl: string; template: string; databasePrefix: string }
  | { available: false; reason: string };

declare module "vitest" {
  export interface ProvidedContext {
    /** Folder for this run's SQLite template and the workers' data folders. */
    vestibuleRunDir: string;
    /** Migrated SQLite database to copy, or "" when no selected project uses SQLite. */
    vestibuleSqliteTemplate: string;
    /** The PostgreSQL template and how to reach the server; null when no postgres project runs. */
    vestibulePostgres: PostgresTestTarget | null;
  }
}

export default async function setup(project: TestProject) {
  const testRoot = path.join(project.config.root, ".data", "test");
  const runDir = path.join(testRoot, String(process.pid));
  removeDeadRuns(testRoot);

  const kinds = new Set(project.vitest.projects.map((p) => p.config.env?.VESTIBULE_TEST_DB ?? "sqlite"));
  const [sqliteTemplate, postgres] = await Promise.all([
    kinds.has("sqlite") ? buildSqliteTemplate(runDir) : Promise.resolve(""),
    kinds.has("postgres") ? buildPostgresTemplate() : Promise.resolve(null),
  ]);

  project.provide("vestibuleRunDir", runDir);
  project.provide("vestibuleSqliteTemplate", sqliteTemplate);
  project.provide("vestibulePostgres", postgres);

  return async () => {
    if (postgres?.available) await dropDatabases(`^${postgres.databasePrefix}`);
    rmSync(runDir, { recursive: true, force: true });
  };
}

async function buildSqliteTemplate(runDir: string): Promise<string> {
  const dir = path.join(runDir, "template");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await migrate({ databaseUrl: null, dataDir: dir, log: () => {} });
  return sqliteFile(dir);
}

async function buildPostgresTemplate(): Promise<PostgresTestTarget> {
  const where = describeServer(ADMIN_URL);
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3_000 });
  admin.on("error", () => {});
  try {
    await admin.connect();
  } catch (e) {
    await admin.end().catch(() => {});
    const detail = e instanceof Error ? e.message : String(e);
    if (process.env.CI === "true") {
      throw new Error(`PostgreSQL at ${where} unreachable (${detail}); CI requires it for the postgres project`);
    }
    console.log(`PostgreSQL at ${where} unreachable: postgres project skipped`);
    return { available: false, reason: `PostgreSQL at ${where} unreachable (${detail})` };
  }
  const prefix = runDatabasePrefix();
  const template = `${prefix}template`;
  try {
    await dropDeadRunDatabases(admin);
    await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${template}"`);
    await migrate({ databaseUrl: databaseUrl(ADMIN_URL, template), log: () => {} });
  } finally {
    await admin.end();
  }
  return { available: true, adminUrl: ADMIN_URL, template, databasePrefix: prefix };
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function removeDeadRuns(testRoot: string) {
  if (!existsSync(testRoot)) return;
  for (const name of readdirSync(testRoot)) {
    if (/^\d+$/.test(name) && !alive(Number(name))) rmSync(path.join(testRoot, name), { recursive: true, force: true });
  }
}

async function dropDeadRunDatabases(admin: pg.Client) {
  const { rows } = await admin.query<{ datname: string; pid: string }>(
    "SELECT datname, substring(datname from $1) AS pid FROM pg_database WHERE datname ~ $1",
    [RUN_DATABASE_PATTERN],
  );
  for (const { datname, pid } of rows) {
    if (!alive(Number(pid))) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
}

async function dropDatabases(regex: string) {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3_000 });
  admin.on("error", () => {});
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname ~ $1", [regex]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
