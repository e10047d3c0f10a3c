// Database sessions read without an ORM round trip (ADR 056): one prepared statement by token
// hash, and a copy kept in this process for SESSION_CACHE_TTL_MS that the revocation list
// invalidates. What may be stale is bounded: an ended session is refused at once on the instance
// that ended it and within the revocation bound (5 s) on every other; a change made behind the
// app's back is seen within the copy's lifetime.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { authRequest } from "../../../app/auth/core/request.server";
import { refreshRevocations, resetRevocations } from "../../../app/auth/core/revocation.server";
import {
  cachedSession,
  cacheSession,
  resetSessionCache,
  SESSION_CACHE_MAX_ENTRIES,
  SESSION_CACHE_TTL_MS,
} from "../../../app/auth/core/session-cache.server";
import { getSession, revokeSession, revokeUserSessions } from "../../../app/auth/core/session.server";
import { findSessionByTokenHash } from "../../../app/db/session-lookup.server";
import { sha256hex } from "../../../app/auth/core/crypto.server";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as signoutRoute from "../../../app/routes/auth/signout";
import { createUser, signIn, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http";
import { sessionUserOf } from "../../support/session-user";

const readSession = async (jar: CookieJar) => (await callRoute(sessionRoute.loader, get("/auth/session", { jar }))).json();
const sessionAt = async (jar: CookieJar, now: Date) => (await getSession(authRequest(get("/auth/session", { jar })), { now })).session;
const tokenHashOf = (jar: CookieJar) => sha256hex(jar.get("authjs.session-token")!);

/** What another instance's revoke-session writes: the row gone and a revocation note, in one transaction. */
async function endedElsewhere(jar: CookieJar) {
  const row = await testDb().session.findUniqueOrThrow({ where: { tokenHash: tokenHashOf(jar) } });
  await testDb().$transaction([
    testDb().session.delete({ where: { id: row.id } }),
    testDb().sessionRevocation.create({ data: { sessionId: row.id, revokedAt: new Date(), expires: row.expires } }),
  ]);
}

let undoEnv: (() => void) | null = null;
beforeEach(async () => {
  await resetDatabase();
  resetRevocations();
  resetSessionCache();
  undoEnv = withEnv({ AUTH_SESSION_STRATEGY: "database" });
});
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  resetRevocations();
  resetSessionCache();
  vi.restoreAllMocks();
});

describe(`the prepared lookup by token hash (${dbLabel})`, () => {
  it("returns the row and its user with exact times, and null for an unknown hash", async () => {
    const user = await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const row = await testDb().session.findUniqueOrThrow({ where: { tokenHash: tokenHashOf(jar) } });
    const found = await findSessionByTokenHash(tokenHashOf(jar));
    expect(found).toEqual({
      id: row.id,
      userId: user.id,
      expires: row.expires,
      createdAt: row.createdAt,
      lastUsedAt: row.lastUsedAt,
      user: { name: "Ada", email: "ada@example.com", image: null },
    });
    expect(await findSessionByTokenHash(sha256hex("nobody"))).toBeNull();
    // A hash is bound as a value, never spliced into the SQL.
    expect(await findSessionByTokenHash(`' OR '1'='1`)).toBeNull();
  });

  it("GET /auth/session never goes through the ORM's session lookup", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const orm = vi.spyOn(testDb().session, "findUnique");
    for (let i = 0; i < 5; i++) expect((await readSession(jar)).user.email).toBe("ada@example.com");
    expect(orm).not.toHaveBeenCalled();
  });
});

describe(`the in-process copy of a database session (${dbLabel})`, () => {
  it("the owner reading again and again (two tabs) is answered every time, one row, no error", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const tabs = await Promise.all(Array.from({ length: 50 }, () => readSession(jar)));
    const ada = await sessionUserOf({ name: "Ada", email: "ada@example.com", image: null });
    for (const body of tabs) expect(body.user).toEqual(ada);
    expect(await testDb().session.count()).toBe(1);
  });

  it("a family behind one address: each browser reads its own user, never another's copy", async () => {
    const people = ["ada", "bob", "cy"].map((n) => `${n}@example.com`);
    for (const email of people) await createUser(email, email.split("@")[0]);
    const jars = await Promise.all(people.map(async (email) => (await signIn(new CookieJar(), email)).jar));
    for (let round = 0; round < 5; round++) {
      const bodies = await Promise.all(jars.map((jar) => readSession(jar)));
      expect(bodies.map((b) => b.user.email)).toEqual(people);
    }
  });

  it("a session ended on this instance is refused at once, though a copy was read a moment before", async () => {
    const user = await createUser();
    const laptop = (await signIn(new CookieJar(), "ada@example.com")).jar;
    const phone = (await signIn(new CookieJar(), "ada@example.com")).jar;
    expect((await readSession(phone)).user.email).toBe("ada@example.com");
    expect((await readSession(laptop)).user.email).toBe("ada@example.com");
    const phoneRow = await testDb().session.findUniqueOrThrow({ where: { tokenHash: tokenHashOf(phone) } });
    expect(await revokeSession(user.id, phoneRow.id)).toBe(true);
    expect(await readSession(phone)).toBeNull();
    expect((await readSession(laptop)).user.email).toBe("ada@example.com");
    // The note every other instance polls was written with the deletion.
    expect(await testDb().sessionRevocation.findUnique({ where: { sessionId: phoneRow.id } })).toMatchObject({ expires: phoneRow.expires });

    await revokeUserSessions(user.id);
    expect(await readSession(laptop)).toBeNull();
  });

  it("signing out on this instance refuses the same token at once (a copied cookie gets nothing)", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const stolen = new CookieJar({ "authjs.session-token": jar.get("authjs.session-token")! });
    expect((await readSession(stolen)).user.email).toBe("ada@example.com");
    const csrfToken = await fetchCsrf(jar);
    await callRoute(signoutRoute.action, post("/auth/signout", { csrfToken }, { jar }));
    expect(await readSession(stolen)).toBeNull();
  });

  it("a session ended on another instance is refused here after the next poll", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    expect((await readSession(jar)).user.email).toBe("ada@example.com");
    await endedElsewhere(jar);
    // Until this process polls, its copy stands (the bound of ADR 056)…
    expect((await readSession(jar))?.user.email).toBe("ada@example.com");
    // …and the poll drops it.
    expect(await refreshRevocations()).toBe(true);
    expect(await readSession(jar)).toBeNull();
  });

  it("with the real timer, another instance's revocation is refused within 5 seconds", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    expect((await readSession(jar)).user.email).toBe("ada@example.com"); // starts this process's poll
    // The copy would live SESSION_CACHE_TTL_MS (5 s); the poll, every 2 s, is what ends it first.
    const started = Date.now();
    await endedElsewhere(jar);
    while ((await readSession(jar)) !== null) {
      expect(Date.now() - started).toBeLessThan(5_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    console.log(`database session revocation seen after ${Date.now() - started} ms (${dbLabel})`);
  }, 10_000);

  it("a change made behind the app's back is seen once the copy's lifetime has passed", async () => {
    await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const now = new Date();
    expect((await sessionAt(jar, now))?.data.user.name).toBe("Ada");
    await testDb().user.update({ where: { email: "ada@example.com" }, data: { name: "Ada L." } });
    expect((await sessionAt(jar, new Date(now.getTime() + 1_000)))?.data.user.name).toBe("Ada");
    expect((await sessionAt(jar, new Date(now.getTime() + SESSION_CACHE_TTL_MS + 1)))?.data.user.name).toBe("Ada L.");
  });

  it("a profile change through the app is seen at once on this instance", async () => {
    await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    expect((await readSession(jar)).user.name).toBe("Ada");
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(sessionRoute.action, post("/auth/session", { csrfToken, data: { name: "Countess" } }, { jar, json: true }));
    expect(res.status).toBe(200);
    expect((await readSession(jar)).user.name).toBe("Countess");
  });

  it("an expired session is refused even from a fresh copy, and its row deleted", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    const now = new Date();
    expect(await sessionAt(jar, now)).not.toBeNull();
    const row = await testDb().session.findUniqueOrThrow({ where: { tokenHash: tokenHashOf(jar) } });
    // Keep the copy fresh while the clock passes the session's expiry.
    cacheSession(tokenHashOf(jar), { ...(await findSessionByTokenHash(tokenHashOf(jar)))! }, row.expires.getTime());
    expect(await sessionAt(jar, new Date(row.expires.getTime() + 1))).toBeNull();
    expect(await testDb().session.count()).toBe(0);
  });

  it("a guessed or altered token finds nothing, and never a copy", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    await readSession(jar);
    const token = jar.get("authjs.session-token")!;
    const altered = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
    expect(await readSession(new CookieJar({ "authjs.session-token": altered }))).toBeNull();
    expect(await readSession(new CookieJar({ "authjs.session-token": token.slice(0, 42) }))).toBeNull();
  });

  it("holds at most SESSION_CACHE_MAX_ENTRIES copies, dropping the oldest first", async () => {
    const row = { id: "s", userId: "u", expires: new Date(), createdAt: new Date(), lastUsedAt: new Date(), user: { name: null, email: null, image: null } };
    const now = Date.now();
    for (let i = 0; i <= SESSION_CACHE_MAX_ENTRIES; i++) cacheSession(`h${i}`, row, now);
    expect(cachedSession("h0", now)).toBeNull();
    expect(cachedSession("h1", now)).not.toBeNull();
    expect(cachedSession(`h${SESSION_CACHE_MAX_ENTRIES}`, now)).not.toBeNull();
    expect(cachedSession("h1", now + SESSION_CACHE_TTL_MS)).toBeNull();
  });
});
