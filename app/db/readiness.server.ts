// Whether this instance can serve traffic (GET /readyz): the database answers through
// the app's own client (so a broken pool shows) and every committed migration is recorded as
// applied. server/main.ts calls it through the server entry; see docs/decisions/031.
import { db, dbProvider, type DbProvider } from "./client.server.ts";
import { defaultMigrationsDir, readMigrations } from "./migrate.server.ts";

/**
 * How long /readyz waits for the database before answering `database`. Below the 5 s PostgreSQL
 * connect/query bound and inside a load balancer's usual probe timeout, so a stalled database is
 * reported rather than making the probe itself time out.
 */
export const READINESS_TIMEOUT_MS = 2_000;

export type Readiness = { ready: true } | { ready: false; reason: "database" | "migrations"; error?: unknown };

const DATABASE_DOWN = (error?: unknown): Readiness => ({ ready: false, reason: "database", error });

// The committed migrations ship with the code and do not change while the process runs.
const committed = new Map<DbProvider, string[]>();
function committedMigrations(provider: DbProvider): string[] {
  let names = committed.get(provider);
  if (!names) {
    names = readMigrations(defaultMigrationsDir(provider), provider).map((m) => m.name);
    committed.set(provider, names);
  }
  return names;
}

type MigrationRow = { migration_name: string; finished_at: unknown; rolled_back_at: unknown };

async function probe(): Promise<Readiness> {
  const client = db();
  try {
    await client.$queryRawUnsafe("SELECT 1");
  } catch (error) {
    return DATABASE_DOWN(error);
  }
  let rows: MigrationRow[];
  try {
    rows = await client.$queryRawUnsafe<MigrationRow[]>('SELECT migration_name, finished_at, rolled_back_at FROM "_prisma_migrations"');
  } catch (error) {
    // The database answered a moment ago: no migration history at all (an empty database).
    return { ready: false, reason: "migrations", error };
  }
  const applied = new Set(rows.filter((r) => r.finished_at != null && r.rolled_back_at == null).map((r) => r.migration_name));
  return committedMigrations(dbProvider()).every((name) => applied.has(name)) ? { ready: true } : { ready: false, reason: "migrations" };
}

// Probes that arrive while one is still waiting on the database share it: a stalled database holds
// at most one pool connection for readiness, however often the load balancer asks.
let pending: Promise<Readiness> | null = null;

/** Answers within READINESS_TIMEOUT_MS; a database that has not answered by then is `database`. */
export function checkReadiness(): Promise<Readiness> {
  pending ??= probe()
    .catch((error: unknown) => DATABASE_DOWN(error))
    .finally(() => {
      pending = null;
    });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<Readiness>((resolve) => {
    timer = setTimeout(() => resolve(DATABASE_DOWN(new Error(`no answer within ${READINESS_TIMEOUT_MS} ms`))), READINESS_TIMEOUT_MS);
  });
  return Promise.race([pending, deadline]).finally(() => clearTimeout(timer));
}
