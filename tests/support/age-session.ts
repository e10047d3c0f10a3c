// Ages the sign-in of a user's sessions in an app's own database, for a test that cannot hold a
// cookie jar of the test process: a browser test (its server, tests/support/browser.ts's
// startApp, has its own data folder or DATABASE_URL), or a test of a server started by hand. Moves
// Session.authenticatedAt `minutes` into the past, no waiting: past AUTH_REAUTH_MAX_AGE (10 minutes
// by default) requireRecentAuth answers "sign in again". SQLite (the data folder's file) and
// PostgreSQL (DATABASE_URL) alike. docs/testing.md
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { SQLITE_FILE_NAME } from "../../app/db/location.server.ts";

/** Where the app keeps its data: `RunningApp` from startApp fits, as does `{ dataDir, env }` of your own. */
export type AppDatabase = { dataDir: string; env?: Record<string, string | undefined> };

/** Moves the sign-in of every session of `email` `minutes` into the past; returns how many sessions moved. */
export async function ageSessionsOf(app: AppDatabase, email: string, minutes: number): Promise<number> {
  const when = new Date(Date.now() - minutes * 60_000);
  const databaseUrl = app.env?.DATABASE_URL;
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const res = await client.query('UPDATE "Session" SET "authenticatedAt" = $1 WHERE "userId" = (SELECT id FROM "User" WHERE email = $2)', [when, email]);
      return res.rowCount ?? 0;
    } finally {
      await client.end();
    }
  }
  const file = new Database(path.join(app.dataDir, SQLITE_FILE_NAME));
  try {
    // Prisma's SQLite adapter keeps a DateTime as ISO text with an explicit offset.
    return file.prepare("UPDATE Session SET authenticatedAt = ? WHERE userId = (SELECT id FROM User WHERE email = ?)").run(when.toISOString().replace("Z", "+00:00"), email).changes;
  } finally {
    file.close();
  }
}
