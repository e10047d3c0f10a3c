// Cleanup (docs/decisions/051) on both databases: what is deleted and what is kept
// at each boundary, the owner's live sessions and a live rate-limit window untouched, the hourly
// schedule, the `npm run db:cleanup` script, and on PostgreSQL one run at a time.
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig, ConfigError } from "../../../app/auth/core/config.server";
import { PG_CLEANUP_LOCK_KEY, runCleanup, scheduleCleanup } from "../../../app/auth/core/cleanup.server";
import { createUser, signIn, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { CookieJar } from "../../support/http";
import { waitUntil } from "../../support/wait";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const DAY = 24 * 60 * 60_000;
const NOW = new Date("2026-11-25T12:00:00.000Z");
const at = (ms: number) => new Date(NOW.getTime() + ms);

let undoEnv: (() => void) | null = null;
beforeEach(async () => {
  await resetDatabase();
});
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
});

/** Rows on both sides of every boundary; ids say which side. */
async function seed() {
  const user = await createUser("cleanup-owner@example.com", "Owner");
  const db = testDb();
  const session = (id: string, expires: Date, extra: Record<string, unknown> = {}) =>
    db.session.create({ data: { id, userId: user.id, expires, kind: "database", tokenHash: `hash-${id}`, ...extra } });
  await session("s-expired-1ms", at(-1));
  await session("s-expired-now", at(0));
  await session("s-live-1ms", at(1));
  await session("s-jwt-expired", at(-DAY), { kind: "jwt", tokenHash: null });
  await session("s-jwt-revoked-live", at(DAY), { kind: "jwt", tokenHash: null, revokedAt: at(-DAY) });
  await session("s-jwt-revoked-expired", at(-1), { kind: "jwt", tokenHash: null, revokedAt: at(-2 * DAY) });
  await db.sessionCutoff.create({ data: { userId: user.id, notBefore: at(-31 * DAY), expires: at(-1) } });
  const other = await createUser("cleanup-other@example.com", "Other");
  await db.sessionCutoff.create({ data: { userId: other.id, notBefore: at(-DAY), expires: at(29 * DAY) } });
  const token = (tokenHash: string, expires: Date) => db.verificationToken.create({ data: { identifier: "a@example.com", tokenHash, expires } });
  await token("t-expired", at(-1));
  await token("t-live", at(60_000));
  const counter = (key: string, expire: Date | null) => db.limitCounter.create({ data: { key, points: 3, expire } });
  await counter("CREDENTIALS_CLIENT:ended", at(-1));
  await counter("CREDENTIALS_CLIENT:live", at(1));
  await counter("CREDENTIALS_CLIENT:forever", null);
  const event = (id: string, when: Date) => db.authEvent.create({ data: { id, type: "signin", userId: user.id, at: when } });
  await event("e-old", at(-90 * DAY - 1));
  await event("e-boundary", at(-90 * DAY));
  await event("e-recent", at(-DAY));
  await db.passkeyChallenge.create({ data: { challengeHash: "c-expired", expires: at(-1) } });
  await db.passkeyChallenge.create({ data: { challengeHash: "c-live", expires: at(1) } });
  await db.sessionRevocation.create({ data: { sessionId: "r-expired", revokedAt: at(-DAY), expires: at(-1) } });
  await db.sessionRevocation.create({ data: { sessionId: "r-live", revokedAt: at(-1), expires: at(1) } });
  // Queued security e-mails: sent a week ago goes, sent yesterday stays; unsent a month on goes, unsent today stays.
  const mail = (id: string, fields: { sentAt?: Date | null; createdAt: Date }) =>
    db.mailQueue.create({ data: { id, recipient: "a@example.com", kind: "password-changed", payload: "{}", ...fields } });
  await mail("m-sent-old", { sentAt: at(-7 * DAY), createdAt: at(-7 * DAY) });
  await mail("m-sent-recent", { sentAt: at(-DAY), createdAt: at(-DAY) });
  await mail("m-unsent-abandoned", { sentAt: null, createdAt: at(-30 * DAY) });
  await mail("m-unsent-due", { sentAt: null, createdAt: at(-1) });
  return { user, other };
}

describe(`cleanup (${dbLabel})`, () => {
  it("deletes expired sessions of both kinds, used-up links, ended windows, spent cutoffs and events past 90 days; keeps the rest", async () => {
    await seed();
    const result = await runCleanup(NOW);
    expect(result).toEqual({
      ran: true,
      counts: { sessions: 4, sessionCutoffs: 1, verificationTokens: 1, limitCounters: 1, authEvents: 1, passkeyChallenges: 1, sessionRevocations: 1, mailQueue: 2, oauthPayloads: 0, oauthSigningKeys: 0, oauthRegistrations: 0, backchannelLogouts: 0, oauthSessionApps: 0, samlRows: 0 },
    });
    const db = testDb();
    expect((await db.session.findMany({ orderBy: { id: "asc" } })).map((s) => s.id)).toEqual(["s-jwt-revoked-live", "s-live-1ms"]);
    expect((await db.sessionCutoff.findMany({ include: { user: true } })).map((c) => c.user.email)).toEqual(["cleanup-other@example.com"]);
    expect((await db.verificationToken.findMany()).map((t) => t.tokenHash)).toEqual(["t-live"]);
    expect((await db.limitCounter.findMany({ orderBy: { key: "asc" } })).map((c) => c.key)).toEqual(["CREDENTIALS_CLIENT:forever", "CREDENTIALS_CLIENT:live"]);
    expect((await db.authEvent.findMany({ orderBy: { id: "asc" } })).map((e) => e.id)).toEqual(["e-boundary", "e-recent"]);
    expect((await db.passkeyChallenge.findMany()).map((c) => c.challengeHash)).toEqual(["c-live"]);
    expect((await db.sessionRevocation.findMany()).map((r) => r.sessionId)).toEqual(["r-live"]);
    expect((await db.mailQueue.findMany({ orderBy: { id: "asc" } })).map((m) => m.id)).toEqual(["m-sent-recent", "m-unsent-due"]);

    // A second run finds nothing more.
    expect(await runCleanup(NOW)).toEqual({ ran: true, counts: { sessions: 0, sessionCutoffs: 0, verificationTokens: 0, limitCounters: 0, authEvents: 0, passkeyChallenges: 0, sessionRevocations: 0, mailQueue: 0, oauthPayloads: 0, oauthSigningKeys: 0, oauthRegistrations: 0, backchannelLogouts: 0, oauthSessionApps: 0, samlRows: 0 } });
  });

  it("deletes in batches: a backlog larger than one batch goes in one run, the live rows stay", async () => {
    const { user } = await seed();
    const db = testDb();
    for (let i = 0; i < 7; i++) {
      await db.session.create({ data: { id: `s-backlog-${i}`, userId: user.id, expires: at(-DAY - i), tokenHash: `hash-backlog-${i}` } });
      await db.authEvent.create({ data: { id: `e-backlog-${i}`, type: "signin", userId: user.id, at: at(-100 * DAY - i) } });
      await db.limitCounter.create({ data: { key: `EMAIL_ADDRESS:backlog-${i}`, points: 1, expire: at(-i - 1) } });
    }
    const result = await runCleanup(NOW, { batch: 2 });
    expect(result).toEqual({
      ran: true,
      counts: { sessions: 11, sessionCutoffs: 1, verificationTokens: 1, limitCounters: 8, authEvents: 8, passkeyChallenges: 1, sessionRevocations: 1, mailQueue: 2, oauthPayloads: 0, oauthSigningKeys: 0, oauthRegistrations: 0, backchannelLogouts: 0, oauthSessionApps: 0, samlRows: 0 },
    });
    expect((await db.session.findMany({ orderBy: { id: "asc" } })).map((s) => s.id)).toEqual(["s-jwt-revoked-live", "s-live-1ms"]);
    expect(await db.limitCounter.count()).toBe(2);
    expect(await db.authEvent.count()).toBe(2);
  });

  it("AUTH_EVENT_RETENTION_DAYS moves the events boundary; a bad value stops the start naming it", async () => {
    undoEnv = withEnv({ AUTH_EVENT_RETENTION_DAYS: "7" });
    const { user } = await seed();
    await testDb().authEvent.create({ data: { id: "e-8-days", type: "signin", userId: user.id, at: at(-8 * DAY) } });
    const result = await runCleanup(NOW);
    expect(result.ran && result.counts.authEvents).toBe(3);
    expect((await testDb().authEvent.findMany()).map((e) => e.id)).toEqual(["e-recent"]);

    for (const bad of ["0", "-1", "ninety", "1.5", "36501"]) {
      expect(() => loadConfig({ NODE_ENV: "test", AUTH_SECRET: "x".repeat(32), AUTH_EVENT_RETENTION_DAYS: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ NODE_ENV: "test", AUTH_SECRET: "x".repeat(32), AUTH_EVENT_RETENTION_DAYS: bad })).toThrow(/AUTH_EVENT_RETENTION_DAYS/);
    }
  });

  it("the owner signing in again and again keeps every live session; an attacker's live limit window survives the cleanup", async () => {
    await createUser("ada@example.com", "Ada");
    const jars: CookieJar[] = [];
    for (let i = 0; i < 3; i++) {
      const { jar, res } = await signIn(new CookieJar());
      expect(res.status).toBe(302);
      jars.push(jar);
    }
    for (let i = 0; i < 3; i++) await signIn(new CookieJar(), "ada@example.com", `wrong-password-${i}`);
    const countersBefore = await testDb().limitCounter.findMany({ orderBy: { key: "asc" } });
    expect(countersBefore.length).toBeGreaterThan(0);
    const sessionsBefore = await testDb().session.count();
    expect(sessionsBefore).toBe(3);

    const result = await runCleanup();
    expect(result).toEqual({ ran: true, counts: { sessions: 0, sessionCutoffs: 0, verificationTokens: 0, limitCounters: 0, authEvents: 0, passkeyChallenges: 0, sessionRevocations: 0, mailQueue: 0, oauthPayloads: 0, oauthSigningKeys: 0, oauthRegistrations: 0, backchannelLogouts: 0, oauthSessionApps: 0, samlRows: 0 } });
    expect(await testDb().session.count()).toBe(3);
    expect(await testDb().limitCounter.findMany({ orderBy: { key: "asc" } })).toEqual(countersBefore);
  });

  it("the hourly schedule runs it by itself and stops when told", async () => {
    await seed();
    const stop = scheduleCleanup({ firstDelayMs: 10, everyMs: 60_000, jitterMs: 1 });
    try {
      // Until the scheduled run has deleted the expired token; the test's timeout bounds it.
      await waitUntil(() => testDb().verificationToken.count({ where: { tokenHash: "t-expired" } }), (n) => n === 0);
    } finally {
      stop();
    }
    // Real time is after NOW: what expired by then is gone, the rest stays.
    expect(await testDb().verificationToken.count()).toBe(0);
    expect(await testDb().authEvent.count()).toBeGreaterThan(0);
  });

  it("npm run db:cleanup prints what it deleted", async () => {
    const { user } = await seed();
    await testDb().session.create({ data: { id: "s-script", userId: user.id, expires: new Date(Date.now() - 1000), tokenHash: "hash-script" } });
    // Asynchronously and with no time limit of its own: a loaded machine may take a while to start it.
    const child = spawn(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/cleanup.ts")], { cwd: root, env: process.env });
    const result = { stdout: "", stderr: "", status: null as number | null };
    child.stdout.on("data", (d) => (result.stdout += d));
    child.stderr.on("data", (d) => (result.stderr += d));
    [result.status] = (await once(child, "close")) as [number | null];
    // Only the line naming the database it used (ADR 107).
    expect(result.stderr).toMatch(/^db:cleanup: database: (SQLite|PostgreSQL) .*\n$/);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/deleted \d+ expired sessions, \d+ expired verification tokens, \d+ ended rate-limit windows, \d+ expired revocations, \d+ spent passkey challenges, \d+ expired session revocation notes, \d+ sent or abandoned queued e-mails, \d+ expired OAuth codes, tokens and grants, \d+ retired OAuth signing keys, \d+ unused OAuth registrations, \d+ sent or given-up back-channel logouts, \d+ expired records of apps in sessions, \d+ auth events older than 90 days/);
    expect(await testDb().session.count({ where: { id: "s-script" } })).toBe(0);
    // A Node process that compiles the script with tsx and opens the database: on a loaded
    // machine it can take longer than the default test time.
  }, 120_000);
});

describe.runIf(dbLabel === "postgres")("cleanup on PostgreSQL: one instance at a time", () => {
  it("of two concurrent runs one deletes and the other skips; a run while another holds the lock skips and deletes nothing", async () => {
    await seed();
    const other = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await other.connect();
    try {
      // Another instance is cleaning up: it holds the lock.
      await other.query("BEGIN");
      await other.query("SELECT pg_advisory_xact_lock($1)", [PG_CLEANUP_LOCK_KEY]);
      expect(await runCleanup(NOW)).toEqual({ ran: false, reason: "locked" });
      expect(await testDb().session.count()).toBe(6);
      await other.query("COMMIT");

      // Two at once. The first to take the lock is held inside its deletes by a row the test
      // keeps locked, so the second certainly arrives while the first runs.
      await other.query("BEGIN");
      await other.query(`SELECT id FROM "Session" WHERE id = 's-expired-1ms' FOR UPDATE`);
      const first = runCleanup(NOW);
      // Wait until the first run holds the lock and waits on that row (not for a time).
      await waitUntil(
        () => testDb().$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`),
        (rows) => Number(rows[0]!.n) > 0,
      );
      const second = await runCleanup(NOW);
      await other.query("COMMIT");
      const results = [await first, second];
      expect(results.filter((r) => r.ran)).toHaveLength(1);
      expect(results.filter((r) => !r.ran)).toEqual([{ ran: false, reason: "locked" }]);
      expect(await testDb().session.count()).toBe(2);
    } finally {
      await other.query("ROLLBACK").catch(() => {});
      await other.end();
    }
  });
});
