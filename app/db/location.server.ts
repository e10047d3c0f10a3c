// Where the embedded database lives and how long a connection waits for another process's lock.
// Shared by the Prisma client and the migration runner so both always open the same file.
import path from "node:path";

export const SQLITE_FILE_NAME = "vestibule.db";

/**
 * How long a SQLite connection waits on another process's write lock before failing with
 * SQLITE_BUSY. The dev server, `npm run db:migrate`, seed scripts and test workers may all have the
 * file open at once; writes are short, so a few seconds of patience removes spurious failures.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export function sqliteFile(dataDir: string): string {
  return path.join(dataDir, SQLITE_FILE_NAME);
}

/**
 * The database an operator's command uses, in one line without a password: "PostgreSQL vestibule
 * on 127.0.0.1:5432 as vestibule" or "SQLite /opt/vestibule/.data/vestibule.db" (ADR 107).
 */
export function databaseLabel(databaseUrl: string | null, dataDir: string): string {
  if (!databaseUrl) return `SQLite ${sqliteFile(dataDir)}`;
  try {
    const u = new URL(databaseUrl);
    const name = decodeURIComponent(u.pathname.replace(/^\//, "")) || "(default database)";
    const user = u.username ? ` as ${decodeURIComponent(u.username)}` : "";
    return `PostgreSQL ${name} on ${u.hostname || "localhost"}:${u.port || 5432}${user}`;
  } catch {
    return "PostgreSQL (DATABASE_URL is not a URL)";
  }
}
