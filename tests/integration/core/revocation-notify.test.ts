// Revocations announced by another instance (ADR 067): on PostgreSQL a NOTIFY on the revocation
// channel is applied without waiting for the 2 s poll — the session kinds at once, anything else
// by an immediate re-read of the database — and a payload that is not ours changes nothing by
// itself. On SQLite (one instance) there is no listener and nothing is published.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server";
import {
  isRevoked,
  isSessionRevoked,
  REVOCATION_CHANNEL,
  REVOCATION_POLL_MS,
  resetRevocations,
  revocationsReady,
  revokedHere,
} from "../../../app/auth/core/revocation.server";
import { publish, subscribe } from "../../../app/db/listen.server";
import { dbLabel, resetDatabase, testDb } from "../../support/db";

const WITHIN_MS = REVOCATION_POLL_MS / 4;

async function until(what: string, ok: () => boolean, withinMs = WITHIN_MS) {
  const started = Date.now();
  while (!ok()) {
    if (Date.now() - started > withinMs) throw new Error(`not ${what} within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - started;
}

/** A client of another process: it only sends. */
async function otherInstance() {
  const client = new pg.Client({ connectionString: getConfig().databaseUrl! });
  await client.connect();
  return client;
}

beforeEach(async () => {
  await resetDatabase();
  resetRevocations();
});
afterEach(() => resetRevocations());

describe.skipIf(dbLabel !== "postgres")(`revocations announced by NOTIFY (${dbLabel})`, () => {
  it("another instance's ended sessions and cut-off apply here well before the poll", async () => {
    await revocationsReady();
    const other = await otherInstance();
    try {
      const deadline = Date.now() + 5_000;
      // Wait for the LISTEN to be in place: a probe message, applied when it arrives.
      while (!isSessionRevoked("probe")) {
        if (Date.now() > deadline) throw new Error("the listener never received the probe");
        await other.query("SELECT pg_notify($1, $2)", [REVOCATION_CHANNEL, JSON.stringify({ v: 1, kind: "sessions", sessions: [{ id: "probe", expires: Date.now() + 60_000 }] })]);
        await new Promise((r) => setTimeout(r, 20));
      }
      const expires = Date.now() + 60_000;
      await other.query("SELECT pg_notify($1, $2)", [REVOCATION_CHANNEL, JSON.stringify({ v: 1, kind: "sessions", sessions: [{ id: "s-ended-elsewhere", expires }] })]);
      await until("the ended session refused", () => isSessionRevoked("s-ended-elsewhere"));
      const notBefore = Math.floor(Date.now() / 1000) * 1000;
      await other.query("SELECT pg_notify($1, $2)", [REVOCATION_CHANNEL, JSON.stringify({ v: 1, kind: "cutoff", userId: "u-elsewhere", notBefore, expires })]);
      // Issue times in ms (ADR 036): a cookie issued up to the cut-off's own millisecond is refused.
      await until("the cut-off applied", () => isRevoked(null, "u-elsewhere", notBefore));
      expect(isRevoked(null, "u-elsewhere", notBefore + 1)).toBe(false);
    } finally {
      await other.end();
    }
  });

  it("another instance's end of every session (sessions:end-all, ADR 107) applies here to every user well before the poll", async () => {
    await revocationsReady();
    const other = await otherInstance();
    try {
      const deadline = Date.now() + 5_000;
      while (!isSessionRevoked("probe-all")) {
        if (Date.now() > deadline) throw new Error("the listener never received the probe");
        await other.query("SELECT pg_notify($1, $2)", [REVOCATION_CHANNEL, JSON.stringify({ v: 1, kind: "sessions", sessions: [{ id: "probe-all", expires: Date.now() + 60_000 }] })]);
        await new Promise((r) => setTimeout(r, 20));
      }
      const notBefore = Date.now();
      expect(isRevoked("sid-anyone", "u-anyone", notBefore)).toBe(false);
      await other.query("SELECT pg_notify($1, $2)", [REVOCATION_CHANNEL, JSON.stringify({ v: 1, kind: "cutoff-all", notBefore, expires: notBefore + 60_000 })]);
      await until("every user's cut-off applied", () => isRevoked("sid-anyone", "u-anyone", notBefore));
      expect(isRevoked(null, "u-someone-else", notBefore - 5_000)).toBe(true);
      expect(isRevoked("sid-anyone", "u-anyone", notBefore + 1)).toBe(false);
    } finally {
      await other.end();
    }
  });

  it("a kind it does not apply itself (a disabled user, a newer version) makes it re-read the database at once", async () => {
    await revocationsReady();
    const user = await testDb().user.create({ data: { email: "disabled@example.com" } });
    const other = await otherInstance();
    try {
      const deadline = Date.now() + 5_000;
      while (!isSessionRevoked("probe-2")) {
        if (Date.now() > deadline) throw new Error("the listener never received the probe");
        await other.query("SELECT pg_notify($1, $2)", [REVOCATION_CHANNEL, JSON.stringify({ v: 1, kind: "sessions", sessions: [{ id: "probe-2", expires: Date.now() + 60_000 }] })]);
        await new Promise((r) => setTimeout(r, 20));
      }
      // What disabling a user will write (a cut-off row), then its announcement.
      const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000);
      await testDb().sessionCutoff.create({ data: { userId: user.id, notBefore, expires: new Date(Date.now() + 60_000) } });
      await other.query("SELECT pg_notify($1, $2)", [REVOCATION_CHANNEL, JSON.stringify({ v: 1, kind: "user-disabled", userId: user.id })]);
      await until("the cut-off re-read", () => isRevoked(null, user.id, notBefore.getTime()));
    } finally {
      await other.end();
    }
  });

  it("a payload that is not a revocation changes nothing by itself, and what this process ends is announced", async () => {
    await revocationsReady();
    const seen: string[] = [];
    const spy = subscribe(REVOCATION_CHANNEL, { onMessage: (p) => seen.push(p), onConnected: () => {}, onLost: () => {} })!;
    try {
      await until("the spy listening", () => spy.connected(), 5_000);
      await publish(REVOCATION_CHANNEL, '{"v":1,"kind":"sessions","sessions":[{"id":5}]}');
      await publish(REVOCATION_CHANNEL, "not json");
      revokedHere([{ id: "s-here", expires: new Date(Date.now() + 60_000) }]);
      await until("the announcement", () => seen.some((p) => p.includes("s-here")), 5_000);
      expect(isSessionRevoked("5")).toBe(false);
      expect(JSON.parse(seen.find((p) => p.includes("s-here"))!)).toEqual({ v: 1, kind: "sessions", sessions: [{ id: "s-here", expires: expect.any(Number) }] });
    } finally {
      await spy.stop();
    }
  });
});

describe.skipIf(dbLabel !== "sqlite")(`one instance, no listener (${dbLabel})`, () => {
  it("subscribe answers null and publish does nothing", async () => {
    expect(subscribe(REVOCATION_CHANNEL, { onMessage: () => {}, onConnected: () => {}, onLost: () => {} })).toBeNull();
    await expect(publish(REVOCATION_CHANNEL, "{}")).resolves.toBeUndefined();
    revokedHere([{ id: "s-sqlite", expires: new Date(Date.now() + 60_000) }]);
    expect(isSessionRevoked("s-sqlite")).toBe(true);
  });
});
