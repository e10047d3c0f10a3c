// Names shared by the global setup (main process) and the per-worker setup.

/** The server the postgres project uses; override with VESTIBULE_TEST_PG_URL (its maintenance database). */
export const ADMIN_URL = process.env.VESTIBULE_TEST_PG_URL || "postgresql://postgres@127.0.0.1:5432/postgres";
export const PG_TEMPLATE = "vestibule_test_template";
/** Cluster-wide advisory lock: exclusive while the template is rebuilt, shared while a worker clones it. */
export const PG_TEMPLATE_LOCK = 72707370;

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
