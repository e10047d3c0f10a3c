// GET /healthz and GET /readyz on the production server: on SQLite and on
// PostgreSQL, with every migration applied, with one not applied, with an empty database and with
// the database gone (its port closed, or accepting connections and never answering).
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE_FILE_NAME } from "../../app/db/location.server";
import { READINESS_TIMEOUT_MS } from "../../app/db/readiness.server";
import { freePort, startApp, type RunningApp } from "../support/browser";
import { waitUntil } from "../support/wait";
import { DatabaseRelay } from "../support/db-relay";
import { ADMIN_URL, databaseUrl, runDatabasePrefix } from "../support/postgres";
import { rawRequest } from "../support/raw-http";

const portOf = (app: RunningApp) => Number(new URL(app.url).port);

async function probe(app: RunningApp, target: "/healthz" | "/readyz") {
  const started = Date.now();
  const res = await rawRequest(portOf(app), `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  return { ...res, json: JSON.parse(res.body) as unknown, ms: Date.now() - started };
}

function expectProbeHeaders(res: { headers: Record<string, string> }) {
  expect(res.headers["content-type"]).toBe("application/json");
  expect(res.headers["cache-control"]).toBe("no-store");
}

function expectNoStackTrace(app: RunningApp) {
  expect(app.logs()).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
}

describe("/healthz and /readyz on SQLite", () => {
  let app: RunningApp;
  const migrations = () => new Database(path.join(app.dataDir, SQLITE_FILE_NAME));

  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  it("/healthz answers 200 ok, not cached; HEAD too, other methods 405 with Allow", async () => {
    const res = await probe(app, "/healthz");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok" });
    expectProbeHeaders(res);

    const head = await rawRequest(portOf(app), "HEAD /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
    const post = await rawRequest(portOf(app), "POST /readyz?x=1 HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET, HEAD");
  });

  it("/readyz is ready when every committed migration is applied, 503 migrations when one is not, and ready again", async () => {
    const ready = await probe(app, "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: "ready" });
    expectProbeHeaders(ready);

    const file = migrations();
    try {
      // The newest migration undone (as after restoring an older backup): recorded as rolled back.
      file.prepare(`UPDATE "_prisma_migrations" SET rolled_back_at = '2026-01-01T00:00:00+00:00' WHERE migration_name = (SELECT max(migration_name) FROM "_prisma_migrations")`).run();
      const pending = await probe(app, "/readyz");
      expect(pending.status).toBe(503);
      expect(pending.json).toEqual({ status: "unavailable", reason: "migrations" });
      expectProbeHeaders(pending);

      file.prepare(`UPDATE "_prisma_migrations" SET rolled_back_at = NULL`).run();
      expect((await probe(app, "/readyz")).status).toBe(200);

      // No migration history at all: an empty database.
      file.exec(`ALTER TABLE "_prisma_migrations" RENAME TO "_prisma_migrations_kept"`);
      const empty = await probe(app, "/readyz");
      expect(empty.status).toBe(503);
      expect(empty.json).toEqual({ status: "unavailable", reason: "migrations" });
      file.exec(`ALTER TABLE "_prisma_migrations_kept" RENAME TO "_prisma_migrations"`);
      expect((await probe(app, "/readyz")).status).toBe(200);
    } finally {
      file.close();
    }
    expectNoStackTrace(app);
  });
});

describe("/readyz on PostgreSQL", () => {
  const database = `${runDatabasePrefix()}ops_readyz`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  let relay: DatabaseRelay;
  let app: RunningApp;
  let direct: pg.Client;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${database}"`);
    relay = new DatabaseRelay(await freePort());
    await relay.open();
    const url = databaseUrl(ADMIN_URL, database).replace(/@[^/]+\//, `@127.0.0.1:${relay.port}/`);
    app = await startApp({ DATABASE_URL: url });
    direct = new pg.Client({ connectionString: databaseUrl(ADMIN_URL, database) });
    await direct.connect();
  });
  afterAll(async () => {
    await direct?.end();
    await app?.stop();
    await relay?.close();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  });

  it("is ready on a migrated database; 503 migrations for an undone migration and for an empty database", async () => {
    // The first check opens the pool's connection through the relay, which on a loaded machine
    // can outlast READINESS_TIMEOUT_MS (an honest "database"): asked until ready.
    const ready = await waitUntil(() => probe(app, "/readyz"), (res) => res.status === 200, { everyMs: 250 });
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: "ready" });
    expectProbeHeaders(ready);

    await direct.query(`UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = (SELECT max(migration_name) FROM "_prisma_migrations")`);
    const pending = await probe(app, "/readyz");
    expect(pending.status).toBe(503);
    expect(pending.json).toEqual({ status: "unavailable", reason: "migrations" });
    await direct.query(`UPDATE "_prisma_migrations" SET rolled_back_at = NULL`);
    expect((await probe(app, "/readyz")).status).toBe(200);

    await direct.query(`ALTER TABLE "_prisma_migrations" RENAME TO "_prisma_migrations_kept"`);
    const empty = await probe(app, "/readyz");
    expect(empty.status).toBe(503);
    expect(empty.json).toEqual({ status: "unavailable", reason: "migrations" });
    await direct.query(`ALTER TABLE "_prisma_migrations_kept" RENAME TO "_prisma_migrations"`);
    expect((await probe(app, "/readyz")).status).toBe(200);
    expectNoStackTrace(app);
  });

  it("answers 503 database within the timeout when the database's port is closed or never answers, and recovers", async () => {
    await relay.close();
    const closed = await probe(app, "/readyz");
    expect(closed.status).toBe(503);
    expect(closed.json).toEqual({ status: "unavailable", reason: "database" });
    expectProbeHeaders(closed);
    expect(closed.ms).toBeLessThan(READINESS_TIMEOUT_MS + 1_000);
    // The process keeps serving: liveness is not readiness.
    expect((await probe(app, "/healthz")).status).toBe(200);

    relay.mode = "stall";
    await relay.open();
    const stalled = await Promise.all([probe(app, "/readyz"), probe(app, "/readyz"), probe(app, "/readyz")]);
    for (const res of stalled) {
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ status: "unavailable", reason: "database" });
      expect(res.ms).toBeGreaterThanOrEqual(READINESS_TIMEOUT_MS - 100);
      expect(res.ms).toBeLessThan(READINESS_TIMEOUT_MS + 1_000);
    }

    await relay.close();
    relay.mode = "forward";
    await relay.open();
    // Back once the next check reaches the database: asked until it says so.
    const back = await waitUntil(() => probe(app, "/readyz"), (res) => res.status === 200, { everyMs: 250 });
    expect(back.json).toEqual({ status: "ready" });
    // Each change is logged once, not at every probe.
    const changes = app.logs().split("\n").filter((l) => l.includes('"event":"readiness-changed"'));
    expect(changes.filter((l) => l.includes('"readiness":"database"'))).toHaveLength(1);
    expect(changes.at(-1)).toContain('"readiness":"ready"');
    expectNoStackTrace(app);
  });
});
