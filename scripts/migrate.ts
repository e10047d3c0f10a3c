// npm run db:migrate: applies the committed migrations to DATABASE_URL, or to the embedded SQLite
// database in VESTIBULE_DATA_DIR. Idempotent; safe to run while the app is running.
import { ConfigError, getConfig } from "../app/auth/core/config.server.ts";
import { MigrationError, migrate, redact } from "../app/db/migrate.server.ts";
import { sqliteFile } from "../app/db/location.server.ts";

async function main(): Promise<number> {
  let config;
  try {
    config = getConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      return 1;
    }
    throw e;
  }
  const where = config.databaseUrl ? redact(config.databaseUrl) : sqliteFile(config.dataDir);
  try {
    const started = performance.now();
    const { applied } = await migrate({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const ms = Math.round(performance.now() - started);
    console.log(applied.length ? `${where}: ${applied.length} migration(s) applied in ${ms} ms` : `${where}: no pending migrations`);
    return 0;
  } catch (e) {
    if (e instanceof MigrationError) {
      console.error(`db:migrate: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

process.exitCode = await main();
