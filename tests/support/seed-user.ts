// A password user written straight into a running server's database from the test process: what
// `npm run user:add` does (upsertCredentialsUser, the production Argon2 parameters), without a
// second Node process that loads tsx, the app and Prisma for each user (about a second of CPU,
// and spawnSync stalled the test's own event loop meanwhile). `addUser` in ./browser.ts still runs
// the real command, for the tests that stand for an operator. docs/decisions/088-test-suite-time.md
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { upsertCredentialsUser } from "../../app/auth/credentials/users.server.ts";
import { withNameSearch, type Db } from "../../app/db/client.server.ts";
import { SQLITE_BUSY_TIMEOUT_MS, sqliteFile } from "../../app/db/location.server.ts";
import { PrismaClient as PostgresClient } from "../../prisma/generated/postgres/client.ts";
import { PrismaClient as SqliteClient } from "../../prisma/generated/sqlite/client.ts";

/** Where a server keeps its data: its DATABASE_URL, or the SQLite file in its VESTIBULE_DATA_DIR. */
export type ServerDatabase = { env: Record<string, string | undefined> };

/**
 * Creates (or updates) `user` with that password in the database of `server` (a RunningApp, a
 * deploy Instance, anything with the env it was started with). The server must have started:
 * it applied the migrations.
 */
export async function seedUser(server: ServerDatabase, user: { email: string; password: string; name?: string; verified?: boolean }) {
  const { DATABASE_URL: url, VESTIBULE_DATA_DIR: dataDir } = server.env;
  if (!url && !dataDir) throw new Error("seedUser: the server's env names neither DATABASE_URL nor VESTIBULE_DATA_DIR");
  // One seed at a time per database: two interactive transactions on one SQLite file from two
  // connections (a test seeding users side by side) can both hold a read lock and wait on each
  // other's upgrade until the transaction times out.
  const key = url ?? dataDir!;
  const previous = seeding.get(key) ?? Promise.resolve();
  const mine = previous.catch(() => undefined).then(() => seedNow(url, dataDir, user));
  seeding.set(key, mine.catch(() => undefined));
  return mine;
}

const seeding = new Map<string, Promise<unknown>>();

/**
 * Runs `work` with a client of the server's own database (a RunningApp's, a deploy Instance's),
 * then disconnects: for a test that writes rows no command writes (an organization's verified
 * domain and connection, say).
 */
export async function withServerDatabase<T>(server: ServerDatabase, work: (client: Db) => Promise<T>): Promise<T> {
  const { DATABASE_URL: url, VESTIBULE_DATA_DIR: dataDir } = server.env;
  if (!url && !dataDir) throw new Error("withServerDatabase: the server's env names neither DATABASE_URL nor VESTIBULE_DATA_DIR");
  // Same models and delegates on both: only the SQL dialect differs (as app/db/client.server.ts).
  // With the app's own extension, so the user's folded name (the /admin search, ADR 085) is written too.
  const client = withNameSearch(
    (url
      ? new PostgresClient({ adapter: new PrismaPg({ connectionString: url }) })
      : new SqliteClient({ adapter: new PrismaBetterSqlite3({ url: sqliteFile(dataDir!), timeout: SQLITE_BUSY_TIMEOUT_MS }) })) as unknown as Db,
  );
  try {
    return await work(client);
  } finally {
    await client.$disconnect();
  }
}

async function seedNow(url: string | undefined, dataDir: string | undefined, { verified = false, ...user }: { email: string; password: string; name?: string; verified?: boolean }) {
  return withServerDatabase({ env: { DATABASE_URL: url, VESTIBULE_DATA_DIR: dataDir } }, async (client) => {
    const created = (await upsertCredentialsUser(user, client)).user;
    // `verified`: the address counts as proved (what creating an organization needs).
    if (verified) await client.user.update({ where: { id: created.id }, data: { emailVerified: new Date() } });
    return created;
  });
}
