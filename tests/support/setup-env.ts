// Runs in each test worker before the test file is imported. Vitest isolates every file in its
// own worker, so every test file starts with its own fresh, migrated database:
//   sqlite:   a copy of the run's template file in .data/test/<run>/sqlite-<worker>/
//   postgres: vestibule_test_<run>_<worker>, cloned from vestibule_test_<run>_template.
// The environment is rebuilt from scratch so that nothing from the developer's shell (AUTH_URL,
// an OIDC issuer, an SMTP server, DATABASE_URL…) changes what the tests see.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, inject, TestRunner, vi } from "vitest";
import { resetConfig } from "../../app/auth/core/config.server.ts";
import { sqliteFile } from "../../app/db/location.server.ts";
import { resetTestEnv } from "./env.ts";
import { databaseUrl } from "./postgres.ts";

const kind = process.env.VESTIBULE_TEST_DB === "postgres" ? "postgres" : "sqlite";
const worker = process.env.VITEST_POOL_ID ?? "1";

// The integration projects run their files one after another in each worker (isolate: false,
// vite.config.ts): what one file left behind must not reach the next. The app's modules are
// loaded afresh for each file (packages stay loaded: that is the time saved), the clock is the
// real one, and what the app keeps on globalThis across reloads is ended in afterAll below.
vi.resetModules();
await endWhatTheFileLeft();
resetTestEnv();

const dataDir = path.join(inject("vestibuleRunDir"), `${kind}-${worker}`);
rmSync(dataDir, { recursive: true, force: true });
mkdirSync(dataDir, { recursive: true });
process.env.VESTIBULE_DATA_DIR = dataDir;

// Vitest reuses one root-suite collector for every file a worker runs, so the flag is set or
// cleared for each file; with it, every test and describe block in the file is collected as
// skipped, and a fully skipped file runs none of its hooks either.
const rootSuite = TestRunner.getCurrentSuite();
const { skip: _previous, ...rootOptions } = rootSuite.options ?? {};
rootSuite.options = rootOptions;

if (kind === "sqlite") {
  const template = inject("vestibuleSqliteTemplate");
  if (!template) throw new Error("no SQLite template: tests/support/global-setup.ts did not run for this project");
  copyFileSync(template, sqliteFile(dataDir));
} else {
  const target = inject("vestibulePostgres");
  if (!target) throw new Error("no PostgreSQL target: tests/support/global-setup.ts did not run for this project");
  if (target.available) {
    const name = `${target.databasePrefix}${worker}`;
    await cloneTemplate(target.adminUrl, target.template, name);
    process.env.DATABASE_URL = databaseUrl(target.adminUrl, name);
  } else {
    rootSuite.options = { ...rootOptions, skip: true };
  }
}

resetConfig();
// Close the file's Prisma client so PostgreSQL sees a clean disconnect. The client module is
// loaded only if the file used it (app/db/client.server.ts keeps it under this symbol):
// importing it for every unit test file would cost a quarter of a second each.
afterAll(endWhatTheFileLeft);

/**
 * Ends what the app keeps on globalThis across module reloads: the mail sender's timer and the
 * revocation list's poll (both read the file's database) stop, the session cache's copies go, and
 * the database client closes. Run after each file and again before the next one: a late
 * fire-and-forget write of the previous file (an audit row, a mail round) can open a client on its
 * database after its afterAll, and that client would otherwise be reused for the next file's copy.
 */
async function endWhatTheFileLeft() {
  const held = globalThis as Record<symbol, unknown>;
  if (held[Symbol.for("vestibule.mail-sender")]) {
    const { mailSenderIdle, stopMailSender } = await import("../../app/mail/queue.server.ts");
    stopMailSender();
    await mailSenderIdle();
  }
  if (held[Symbol.for("vestibule.revocations")]) (await import("../../app/auth/core/revocation.server.ts")).resetRevocations();
  if (held[Symbol.for("vestibule.session-cache")]) (await import("../../app/auth/core/session-cache.server.ts")).resetSessionCache();
  vi.useRealTimers();
  if (!held[Symbol.for("vestibule.db")]) return;
  const { closeDb } = await import("../../app/db/client.server.ts");
  await closeDb();
}

async function cloneTemplate(adminUrl: string, template: string, name: string) {
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: adminUrl });
  admin.on("error", () => {});
  await admin.connect();
  try {
    // FORCE: a worker that crashed may have left connections to its database behind.
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  } finally {
    await admin.end();
  }
}
