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
