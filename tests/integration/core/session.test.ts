import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server";
import { sha256hex } from "../../../app/auth/core/crypto.server";
import { encodeJwt } from "../../../app/auth/core/jwt.server";
import { writeChunkedCookie } from "../../../app/auth/core/cookies.server";
import { authRequest } from "../../../app/auth/core/request.server";
import { createSession, getSession, refreshSession, reissueSession, revokeUserSessions } from "../../../app/auth/core/session.server";
import { resetRevocations } from "../../../app/auth/core/revocation.server";
import { resetSessionCache } from "../../../app/auth/core/session-cache.server";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as signoutRoute from "../../../app/routes/auth/signout";
import { createUser, signIn, withEnv } from "../../support/auth";
import { resetDatabase, testDb } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http";
import { sessionUserOf } from "../../support/session-user";

const DAY = 86_400_000;
const readSession = (jar: CookieJar) => callRoute(sessionRoute.loader, get("/auth/session", { jar }));
const sessionCookie = (res: Response) => res.headers.getSetCookie().filter((c) => c.startsWith("authjs.session-token"));

let undoEnv: (() => void) | null = null;
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
});
beforeEach(async () => {
  await resetDatabase();
});

describe("GET /auth/session", () => {
  it("answers null with the no-cache headers when signed out", async () => {
    const res = await readSession(new CookieJar());
    expect(res.status).toBe(200);
    expect(await res.json()).toBeNull();
    expect(res.headers.get("Cache-Control")).toBe("private, no-cache, no-store");
    expect(res.headers.get("Pragma")).toBe("no-cache");
    expect(res.headers.get("Expires")).toBe("0");
  });

  it("treats a tampered, truncated or foreign cookie as signed out and clears it", async () => {
    await createUser();
    const { jar } = await signIn();
    const good = jar.get("authjs.session-token")!;
    // Flip a character inside the ciphertext (the last one of a segment may only carry padding bits).
    const parts = good.split(".");
    const mid = Math.floor(parts[3]!.length / 2);
    parts[3] = parts[3]!.slice(0, mid) + (parts[3]![mid] === "A" ? "B" : "A") + parts[3]!.slice(mid + 1);
    for (const bad of [good.slice(0, -12), parts.join("."), "garbage", "a.b.c.d.e"]) {
      const res = await readSession(new CookieJar({ "authjs.session-token": bad }));
      expect(await res.json()).toBeNull();
      expect(sessionCookie(res)).toEqual([expect.stringMatching(/^authjs\.session-token=; Max-Age=0/)]);
    }
  });

  it("clears orphaned chunks of a session cookie", async () => {
    const res = await readSession(new CookieJar({ "authjs.session-token.1": "x" }));
    expect(await res.json()).toBeNull();
    expect(sessionCookie(res)[0]).toMatch(/^authjs\.session-token\.1=; Max-Age=0/);
  });
});

describe("jwt sessions", () => {
  it("holds name, email, picture and sub, expires in 30 days, and rolls at most once a day", async () => {
    const user = await createUser();
    const { jar } = await signIn();
    const first = await readSession(jar);
    const body = await first.json();
    expect(body.user).toEqual(await sessionUserOf({ name: "Ada", email: "ada@example.com", image: null }));
    expect(Date.parse(body.expires) - Date.now()).toBeGreaterThan(30 * DAY - 60_000);
    expect(sessionCookie(first)).toEqual([]); // fresh: not re-issued

    // A token issued two days ago is re-issued with a new expiry.
    const config = getConfig();
    const old = await encodeJwt({
      payload: { name: "Ada", email: "ada@example.com", picture: null, sub: user.id },
      secrets: config.secrets,
      salt: "authjs.session-token",
      maxAge: config.sessionMaxAge,
      now: new Date(Date.now() - 2 * DAY),
    });
    const rolled = await readSession(new CookieJar({ "authjs.session-token": old }));
    const rolledBody = await rolled.json();
    expect(Date.parse(rolledBody.expires) - Date.now()).toBeGreaterThan(30 * DAY - 60_000);
    expect(sessionCookie(rolled)).toHaveLength(1);
    expect(sessionCookie(rolled)[0]).toMatch(/Expires=/);
  });

  it("is expired after its max age", async () => {
    const config = getConfig();
    const token = await encodeJwt({ payload: { sub: "u" }, secrets: config.secrets, salt: "authjs.session-token", maxAge: config.sessionMaxAge, now: new Date(Date.now() - 31 * DAY) });
    expect(await (await readSession(new CookieJar({ "authjs.session-token": token }))).json()).toBeNull();
  });

  it("reads a chunked session cookie and re-issues it in chunks, expiring the ones no longer used", async () => {
    const user = await createUser();
    const config = getConfig();
    // Extra claims (as apps add through Auth.js callbacks) push the token past one cookie.
    const token = await encodeJwt({
      payload: { name: "Ada", email: "ada@example.com", picture: null, sub: user.id, roles: "r".repeat(6000) },
      secrets: config.secrets,
      salt: "authjs.session-token",
      maxAge: config.sessionMaxAge,
      now: new Date(Date.now() - 2 * DAY),
    });
    const jar = new CookieJar();
    const pieces = writeChunkedCookie(new Map(), "authjs.session-token", token, { secure: false });
    expect(pieces.length).toBeGreaterThan(1);
    jar.apply(pieces);
    const res = await readSession(jar);
    expect((await res.json()).user.email).toBe("ada@example.com");
    const written = sessionCookie(res);
    const live = written.filter((c) => !/Max-Age=0/.test(c));
    expect(live.map((c) => c.split("=")[0])).toEqual(pieces.map((c) => c.split("=")[0]));
    for (const c of live) expect(Buffer.byteLength(c)).toBeLessThanOrEqual(4096);
    jar.apply(res);
    expect((await (await readSession(jar)).json()).user.name).toBe("Ada");

    // A missing piece means a truncated cookie: signed out, and every chunk is cleared.
    jar.delete("authjs.session-token.0");
    const broken = await readSession(jar);
    expect(await broken.json()).toBeNull();
    expect(sessionCookie(broken).every((c) => /Max-Age=0/.test(c))).toBe(true);
    expect(sessionCookie(broken).length).toBe(live.length - 1);
  });
});

describe("jwt sessions: ending the others keeps this one", () => {
  it("re-issues the kept cookie past the cut-off written a few seconds after its sign-in; the others stay ended", async () => {
    const user = await createUser();
    const { jar: laptop } = await signIn(new CookieJar(), "ada@example.com");
    const { jar: phone } = await signIn(new CookieJar(), "ada@example.com");
    // The owner clicks "sign out of other devices" a few seconds after signing in (always a later
    // second than the cookie's issue time in real use).
    const later = new Date(Date.now() + 5_000);
    const ar = authRequest(get("/account", { jar: laptop }));
    const kept = (await getSession(ar, { now: later })).session!;
    await revokeUserSessions(user.id, { except: kept.sessionId, now: later });
    const reissued = await reissueSession(ar, later);
    expect(reissued).toHaveLength(1);
    laptop.apply(reissued);
    const stillLater = new Date(later.getTime() + 1_000);
    expect((await getSession(authRequest(get("/auth/session", { jar: laptop })), { now: stillLater })).session?.data.user.email).toBe("ada@example.com");
    expect((await getSession(authRequest(get("/auth/session", { jar: phone })), { now: stillLater })).session).toBeNull();
  });
});

describe("jwt sessions: a cut-off ends every cookie issued up to its own moment", () => {
  // A second that starts a little ahead of the clock, so every step below falls inside it.
  const sameSecond = () => (Math.floor(Date.now() / 1000) + 10) * 1000;

  it("a stolen copy of this device's cookie, issued in the same second as 'sign out of other devices', is ended while the device keeps its re-issued cookie", async () => {
    const user = await createUser();
    const second = sameSecond();
    const laptop = new CookieJar();
    laptop.apply(await createSession(authRequest(get("/", { jar: laptop })), { id: user.id, name: "Ada", email: "ada@example.com", image: null }, { now: new Date(second + 100) }));
    // The attacker copies the laptop's cookie as it is now.
    const stolen = new CookieJar({ "authjs.session-token": laptop.get("authjs.session-token")! });
    const click = new Date(second + 400);
    const ar = authRequest(get("/account", { jar: laptop }));
    const kept = (await getSession(ar, { now: click })).session!;
    await revokeUserSessions(user.id, { except: kept.sessionId, now: click });
    laptop.apply(await reissueSession(ar, click));
    const read = { now: new Date(second + 600) };
    expect((await getSession(authRequest(get("/auth/session", { jar: stolen })), read)).session).toBeNull();
    expect((await getSession(authRequest(get("/auth/session", { jar: laptop })), read)).session?.userId).toBe(user.id);
    // Another instance, which knows the cut-off only from the database, agrees.
    resetRevocations();
    expect((await getSession(authRequest(get("/auth/session", { jar: stolen })), read)).session).toBeNull();
    expect((await getSession(authRequest(get("/auth/session", { jar: laptop })), read)).session?.userId).toBe(user.id);
  });

  it("a cookie without a session id issued in the same second as 'sign out everywhere' is ended by it", async () => {
    const user = await createUser();
    const second = sameSecond();
    const config = getConfig();
    const token = await encodeJwt({
      payload: { name: "Ada", email: "ada@example.com", picture: null, sub: user.id },
      secrets: config.secrets,
      salt: "authjs.session-token",
      maxAge: config.sessionMaxAge,
      now: new Date(second + 100),
    });
    await revokeUserSessions(user.id, { now: new Date(second + 400) });
    const jar = new CookieJar({ "authjs.session-token": token });
    expect((await getSession(authRequest(get("/auth/session", { jar })), { now: new Date(second + 600) })).session).toBeNull();
  });

  it("a password change's kept session survives the cut-off written in the same millisecond, and the copy taken before it does not", async () => {
    const user = await createUser();
    const second = sameSecond();
    const jar = new CookieJar();
    const sessionUser = { id: user.id, name: "Ada", email: "ada@example.com", image: null };
    jar.apply(await createSession(authRequest(get("/", { jar })), sessionUser, { now: new Date(second + 100) }));
    const stolen = new CookieJar({ "authjs.session-token": jar.get("authjs.session-token")! });
    const change = new Date(second + 400);
    const ar = authRequest(get("/account", { jar }));
    const own = (await getSession(ar, { now: change })).session!;
    await revokeUserSessions(user.id, { except: own.sessionId, now: change });
    jar.apply((await refreshSession(ar, sessionUser, { now: change, kept: true })).setCookies);
    const read = { now: new Date(second + 600) };
    expect((await getSession(authRequest(get("/auth/session", { jar })), read)).session?.userId).toBe(user.id);
    expect((await getSession(authRequest(get("/auth/session", { jar: stolen })), read)).session).toBeNull();
  });
});

describe("database sessions", () => {
  beforeEach(() => {
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: "database" });
  });

  it("stores only the token's SHA-256 with user, expiry, creation, last use and device", async () => {
    const user = await createUser();
    const { jar, res } = await signIn(new CookieJar(), "ada@example.com", undefined, {});
    expect(res).toHaveSessionCookie();
    const token = jar.get("authjs.session-token")!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await testDb().session.findMany();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ userId: user.id, tokenHash: sha256hex(token) });
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0]!.expires.getTime() - Date.now()).toBeGreaterThan(30 * DAY - 60_000);
    const body = await (await readSession(jar)).json();
    expect(body.user.email).toBe("ada@example.com");
  });

  it("rolls the expiry at most once per day", async () => {
    await createUser();
    const { jar } = await signIn();
    const fresh = await readSession(jar);
    expect(sessionCookie(fresh)).toEqual([]);
    // Pretend the session was last extended 2 days ago.
    const [row] = await testDb().session.findMany();
    await testDb().session.update({ where: { id: row!.id }, data: { expires: new Date(Date.now() + 28 * DAY) } });
    // A write behind the app's back reaches a process after its copy's lifetime (ADR 056); start without one.
    resetSessionCache();
    const rolled = await readSession(jar);
    expect(sessionCookie(rolled)).toHaveLength(1);
    const after = await testDb().session.findUniqueOrThrow({ where: { id: row!.id } });
    expect(after.expires.getTime() - Date.now()).toBeGreaterThan(30 * DAY - 60_000);
  });

  it("clears session-cookie chunks left from a jwt session", async () => {
    const res = await readSession(new CookieJar({ "authjs.session-token.0": "abc", "authjs.session-token.1": "def" }));
    expect(await res.json()).toBeNull();
    expect(sessionCookie(res).map((c) => c.split("=")[0])).toEqual(["authjs.session-token.0", "authjs.session-token.1"]);
  });

  it("deletes an expired row and clears the cookie", async () => {
    await createUser();
    const { jar } = await signIn();
    await testDb().session.updateMany({ data: { expires: new Date(Date.now() - 1000) } });
    const res = await readSession(jar);
    expect(await res.json()).toBeNull();
    expect(sessionCookie(res)[0]).toMatch(/Max-Age=0/);
    expect(await testDb().session.count()).toBe(0);
  });

  it("replaces the previous session row when signing in again", async () => {
    await createUser();
    const { jar } = await signIn();
    await signIn(jar);
    expect(await testDb().session.count()).toBe(1);
  });

  it("signs out by deleting the row and clearing the cookie", async () => {
    await createUser();
    const { jar } = await signIn();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(signoutRoute.action, post("/auth/signout", { csrfToken, callbackUrl: "/bye" }, { jar }));
    expect(res).toHaveRedirect("http://localhost:3000/bye");
    expect(sessionCookie(res)[0]).toMatch(/^authjs\.session-token=; Max-Age=0/);
    expect(await testDb().session.count()).toBe(0);
    // The old cookie is dead even if a client keeps sending it.
    expect(await (await readSession(jar)).json()).toBeNull();
  });

  it("reads a session through the core function with a chosen clock", async () => {
    await createUser();
    const { jar } = await signIn();
    const ar = authRequest(get("/", { jar }));
    const later = await getSession(ar, { now: new Date(Date.now() + 31 * DAY) });
    expect(later.session).toBeNull();
  });
});

describe("POST /auth/session (update)", () => {
  it("refuses a bad CSRF token with 400 null", async () => {
    await createUser();
    const { jar } = await signIn();
    const res = await callRoute(sessionRoute.action, post("/auth/session", { csrfToken: "nope", data: { name: "X" } }, { jar, json: true }));
    expect(res.status).toBe(400);
    expect(await res.json()).toBeNull();
  });

  it.each(["jwt", "database"])("stores a new name and returns the new session (%s)", async (strategy) => {
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    const user = await createUser();
    const { jar } = await signIn();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(sessionRoute.action, post("/auth/session", { csrfToken, data: { name: "  Ada Lovelace " } }, { jar, json: true }));
    expect(res.status).toBe(200);
    expect((await res.json()).user.name).toBe("Ada Lovelace");
    jar.apply(res);
    expect((await (await readSession(jar)).json()).user.name).toBe("Ada Lovelace");
    expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).name).toBe("Ada Lovelace");
  });

  it.each([
    [{ name: "" }, "Name cannot be empty."],
    [{ name: "x".repeat(101) }, "Use at most 100 characters for the name: this one has 101."],
    [{ image: "javascript:alert(1)" }, "Image must be an http(s) URL."],
    [{ email: "evil@example.com" }, "Only name and image can be updated."],
  ])("rejects %j with a clear message", async (data, message) => {
    await createUser();
    const { jar } = await signIn();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(sessionRoute.action, post("/auth/session", { csrfToken, data }, { jar, json: true }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: message });
    expect((await testDb().user.findFirstOrThrow()).name).toBe("Ada");
  });

  it("ends a stateless session whose user was deleted instead of failing", async () => {
    const user = await createUser();
    const { jar } = await signIn();
    const csrfToken = await fetchCsrf(jar);
    await testDb().user.delete({ where: { id: user.id } });
    const res = await callRoute(sessionRoute.action, post("/auth/session", { csrfToken, data: { name: "Ghost" } }, { jar, json: true }));
    expect(res.status).toBe(200);
    expect(await res.json()).toBeNull();
    expect(sessionCookie(res)[0]).toMatch(/^authjs\.session-token=; Max-Age=0/);
    expect(await testDb().user.count()).toBe(0);
  });

  it("answers null when there is no session", async () => {
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(sessionRoute.action, post("/auth/session", { csrfToken, data: { name: "X" } }, { jar, json: true }));
    expect(res.status).toBe(200);
    expect(await res.json()).toBeNull();
  });
});

describe("POST /auth/signout", () => {
  it("requires the CSRF token", async () => {
    await createUser();
    const { jar } = await signIn();
    const res = await callRoute(signoutRoute.action, post("/auth/signout", {}, { jar }));
    expect(res.headers.get("Location")).toBe("http://localhost:3000/auth/signin?error=MissingCSRF");
    expect(sessionCookie(res)).toEqual([]);
  });

  it("clears every chunk of a jwt session and answers {url} in JSON mode", async () => {
    const jar = new CookieJar({ "authjs.session-token.0": "a", "authjs.session-token.1": "b" });
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(signoutRoute.action, post("/auth/signout", { csrfToken, json: "true" }, { jar }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: "http://localhost:3000/" });
    expect(sessionCookie(res).map((c) => c.split("=")[0])).toEqual(["authjs.session-token.0", "authjs.session-token.1"]);
  });
});
