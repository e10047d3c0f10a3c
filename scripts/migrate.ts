// npm run db:migrate: applies the committed migrations to DATABASE_URL, or to the embedded SQLite
// database in VESTIBULE_DATA_DIR, which it creates when there is none (unlike the maintenance
// commands, ADR 107). Reads the env file VESTIBULE_ENV_FILE names, as they do. Idempotent; safe to
// run while the app is running.
import { ConfigError, getConfig } from "../app/auth/core/config.server.ts";
import { EnvFileError, loadCommandEnvFile } from "../app/auth/core/env-file.server.ts";
import { MigrationError, migrate, redact } from "../app/db/migrate.server.ts";
import { databaseLabel, sqliteFile } from "../app/db/location.server.ts";

async function main(): Promise<number> {
  let config;
  try {
    loadCommandEnvFile();
    config = getConfig();
  } catch (e) {
    if (e instanceof ConfigError || e instanceof EnvFileError) {
      console.error(`db:migrate: ${e.message}`);
      return 1;
    }
    throw e;
  }
  console.error(`db:migrate: database: ${databaseLabel(config.databaseUrl, config.dataDir)}`);
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
