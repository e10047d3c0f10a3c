// The in-memory revocation list is bounded (ADR 064): a flood of ended sessions cannot grow a
// process's memory without end. Past the cap the process never forgets a revocation: it drops the
// list and asks the database for every session read until the ones in force fit again.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { authRequest } from "../../../app/auth/core/request.server";
import { refreshRevocations, resetRevocations, revocationListState } from "../../../app/auth/core/revocation.server";
import { resetSessionCache } from "../../../app/auth/core/session-cache.server";
import { createSession, getSession, revokeSession } from "../../../app/auth/core/session.server";
import { createUser, signIn, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { CookieJar, get } from "../../support/http";

const CAP = 4;
const sessionOf = async (jar: CookieJar) => (await getSession(authRequest(get("/auth/session", { jar })), { roll: false })).session;

let undoEnv: (() => void) | null = null;
beforeEach(async () => {
  await resetDatabase();
  resetRevocations({ maxEntries: CAP });
  resetSessionCache();
});
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  resetRevocations();
  resetSessionCache();
});

/**
 * Ada signed in on `n` devices; each jar with its session id. The first through the password
 * form; the others started by createSession, the call that sign-in ends in, without an Argon2
 * check each: these tests are about ended sessions, not about signing in (ADR 088).
 */
async function devices(n: number) {
  const user = await createUser();
  const out: { jar: CookieJar; sid: string }[] = [];
  for (let i = 0; i < n; i++) {
    let jar = new CookieJar();
    if (i === 0) ({ jar } = await signIn(jar));
    else jar.apply(await createSession(authRequest(get("/")), { id: user.id, email: user.email, name: user.name, image: null }, { method: "credentials", factors: ["pwd"] }));
    out.push({ jar, sid: (await sessionOf(jar))!.sessionId! });
  }
  return { user, devices: out };
}

for (const strategy of ["jwt", "database"] as const) {
  describe(`a flood of ended sessions (${strategy} sessions, ${dbLabel})`, () => {
    beforeEach(() => {
      undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    });

    it("an attacker ending more sessions than the cap keeps the list bounded, and every ended session stays ended while the live one works", async () => {
      const { user, devices: all } = await devices(CAP + 4);
      const live = all.pop()!;
      // Read once, so database sessions have a copy in memory that the list would have to drop.
      for (const d of all) expect(await sessionOf(d.jar)).not.toBeNull();
      for (const d of all) {
        expect(await revokeSession(user.id, d.sid)).toBe(true);
        expect(revocationListState().entries).toBeLessThanOrEqual(CAP);
      }
      expect(revocationListState().complete).toBe(false);
      for (const d of all) expect(await sessionOf(d.jar)).toBeNull();
      expect((await sessionOf(live.jar))?.userId).toBe(user.id);
      // The poll does not bring an incomplete list back while the revocations in force exceed the cap.
      await refreshRevocations();
      expect(revocationListState()).toMatchObject({ complete: false });
      for (const d of all) expect(await sessionOf(d.jar)).toBeNull();
    });

    it("another instance starting with more revocations in force than the cap refuses them all from the database", async () => {
      const { user, devices: all } = await devices(CAP + 3);
      const live = all.pop()!;
      resetRevocations();
      for (const d of all) await revokeSession(user.id, d.sid);
      // A fresh process with the cap.
      resetRevocations({ maxEntries: CAP });
      resetSessionCache();
      for (const d of all) expect(await sessionOf(d.jar)).toBeNull();
      expect(revocationListState()).toEqual({ entries: 0, complete: false });
      expect((await sessionOf(live.jar))?.userId).toBe(user.id);
    });

    it("once the revocations in force fit again, the list is whole again and still refuses every ended session", async () => {
      const { user, devices: all } = await devices(CAP + 2);
      for (const d of all) await revokeSession(user.id, d.sid);
      expect(revocationListState().complete).toBe(false);
      // The oldest notes expire (here: their rows are gone), leaving fewer than the cap.
      const ended = all.slice(0, 3).map((d) => d.sid);
      await testDb().sessionRevocation.deleteMany({ where: { sessionId: { in: ended } } });
      await testDb().session.deleteMany({ where: { id: { in: ended } } });
      await refreshRevocations();
      expect(revocationListState().complete).toBe(true);
      expect(revocationListState().entries).toBeLessThanOrEqual(CAP);
      for (const d of all.slice(3)) expect(await sessionOf(d.jar)).toBeNull();
    });
  });
}

describe(`a database outage while the list is incomplete (${dbLabel})`, () => {
  it("refuses jwt sessions it cannot check rather than letting an ended one in", async () => {
    const { user, devices: all } = await devices(CAP + 2);
    const live = all.pop()!;
    for (const d of all) await revokeSession(user.id, d.sid);
    expect(revocationListState().complete).toBe(false);
    const { db } = await import("../../../app/db/client.server");
    const client = db();
    const original = client.sessionCutoff.findUnique.bind(client.sessionCutoff);
    (client.sessionCutoff as { findUnique: unknown }).findUnique = () => Promise.reject(new Error("connection refused"));
    try {
      expect(await sessionOf(all[0]!.jar)).toBeNull();
      expect(await sessionOf(live.jar)).toBeNull();
    } finally {
      (client.sessionCutoff as { findUnique: unknown }).findUnique = original;
    }
    expect((await sessionOf(live.jar))?.userId).toBe(user.id);
  });
});
