// Names shared by the global setup (main process) and the per-worker setup.

/** The server the postgres project uses; override with VESTIBULE_TEST_PG_URL (its maintenance database). */
export const ADMIN_URL = process.env.VESTIBULE_TEST_PG_URL || "postgresql://postgres@127.0.0.1:5432/postgres";
/**
 * Every database a test run creates is named vestibule_test_<run>_…, <run> being the Vitest
 * process id: the template, the workers' databases and the tests' scratch databases. A run only
 * ever touches its own, and drops those of runs whose process is gone.
 */
export const runDatabasePrefix = (pid: number = process.pid) => `vestibule_test_${pid}_`;
export const RUN_DATABASE_PATTERN = "^vestibule_test_([0-9]+)_";

/** The same server and credentials, another database. */
export function databaseUrl(adminUrl: string, database: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/** "host:port" for messages (never the credentials). */
export function describeServer(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}`;
}
