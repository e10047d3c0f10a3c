// AUTH_SESSION_MAX_AGE and AUTH_SESSION_UPDATE_AGE (ADR 113): the session
// lifetimes of both strategies — the cookie's expiry, `expires` in /auth/session and the session
// row — come from the settings; AUTH_ASSURANCE=aal2's limits still apply and the shorter wins.
// Only Date is faked: the clock is pinned so the expiries can be compared to the second.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfig } from "../../../app/auth/core/config.server.ts";
import { resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import * as sessionRoute from "../../../app/routes/auth/session";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, setCookieHeaders } from "../../support/http.ts";
import { envPerTest } from "../../support/per-test.ts";

const T0 = new Date("2026-11-26T08:00:00Z").getTime();

const setEnv = envPerTest();
afterEach(() => {
  vi.useRealTimers();
  resetRevocations();
});

/** The session cookie's expiry (ms) among a response's Set-Cookie headers, or null when it is not written. */
function sessionCookieExpiry(res: Response): number | null {
  const header = setCookieHeaders(res).find((h) => h.startsWith("authjs.session-token=") || h.startsWith("authjs.session-token.0="));
  if (!header) return null;
  const maxAge = /;\s*Max-Age=(\d+)/i.exec(header);
  if (maxAge) return T0 + Number(maxAge[1]) * 1000;
  return Date.parse(/;\s*Expires=([^;]+)/i.exec(header)![1]!);
}

async function readSession(jar: CookieJar) {
  const res = await callRoute(sessionRoute.loader, get("/auth/session", { jar }));
  jar.apply(res);
  return { res, body: (await res.json()) as { expires: string; user: { email: string } } | null };
}

describe("the settings", () => {
  const env = { ...process.env, AUTH_ASSURANCE: undefined, AUTH_SESSION_MAX_AGE: undefined, AUTH_SESSION_UPDATE_AGE: undefined };

  it("an operator's AUTH_SESSION_MAX_AGE outside 300 to 31536000 seconds, or not a number, stops the start naming it", () => {
    for (const bad of ["60", "299", "31536001", "1h", "-5", "3600.5"]) {
      expect(() => loadConfig({ ...env, AUTH_SESSION_MAX_AGE: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ ...env, AUTH_SESSION_MAX_AGE: bad }), bad).toThrow(/AUTH_SESSION_MAX_AGE must be a whole number of seconds from 300 to 31536000/);
    }
  });

  it("an operator's AUTH_SESSION_UPDATE_AGE longer than the max age, or not a number, stops the start naming it", () => {
    expect(() => loadConfig({ ...env, AUTH_SESSION_MAX_AGE: "3600", AUTH_SESSION_UPDATE_AGE: "3601" })).toThrow(/AUTH_SESSION_UPDATE_AGE must be a whole number of seconds from 0 to 3600/);
    expect(() => loadConfig({ ...env, AUTH_SESSION_UPDATE_AGE: "2592001" })).toThrow(/AUTH_SESSION_UPDATE_AGE must be a whole number of seconds from 0 to 2592000/);
    expect(() => loadConfig({ ...env, AUTH_SESSION_UPDATE_AGE: "daily" })).toThrow(/AUTH_SESSION_UPDATE_AGE/);
  });

  it("unset, they keep 30 days and a day; set, they are taken; aal2 caps them and a shorter one set wins", () => {
    expect(loadConfig(env)).toMatchObject({ sessionMaxAge: 2_592_000, sessionUpdateAge: 86_400 });
    expect(loadConfig({ ...env, AUTH_SESSION_MAX_AGE: "7200", AUTH_SESSION_UPDATE_AGE: "0" })).toMatchObject({ sessionMaxAge: 7200, sessionUpdateAge: 0 });
    expect(loadConfig({ ...env, AUTH_SESSION_MAX_AGE: "31536000" })).toMatchObject({ sessionMaxAge: 31_536_000, sessionUpdateAge: 86_400 });
    expect(loadConfig({ ...env, AUTH_ASSURANCE: "aal2", AUTH_SESSION_MAX_AGE: "7200", AUTH_SESSION_UPDATE_AGE: "600" })).toMatchObject({ sessionMaxAge: 3600, sessionUpdateAge: 300 });
    expect(loadConfig({ ...env, AUTH_ASSURANCE: "aal2", AUTH_SESSION_MAX_AGE: "900", AUTH_SESSION_UPDATE_AGE: "60" })).toMatchObject({ sessionMaxAge: 900, sessionUpdateAge: 60 });
  });
});

describe.each(["jwt", "database"] as const)(`configured session lifetimes, %s (${dbLabel})`, (strategy) => {
  beforeEach(async () => {
    await resetDatabase();
    resetRevocations();
    vi.useFakeTimers({ toFake: ["Date"], now: T0 });
    await createUser();
  });

  async function signedInRow() {
    const rows = await testDb().session.findMany({ where: { kind: strategy, revokedAt: null } });
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }

  it("a site that sets a two-hour max age gives a cookie, an /auth/session expiry and a row that end two hours after the sign-in", async () => {
    setEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_SESSION_MAX_AGE: "7200", AUTH_ASSURANCE: undefined });
    const { jar, res } = await signIn();
    expect(sessionCookieExpiry(res)).toBe(T0 + 7200_000);
    const { body } = await readSession(jar);
    expect(Date.parse(body!.expires)).toBe(T0 + 7200_000);
    expect((await signedInRow()).expires.getTime()).toBe(T0 + 7200_000);
    // Past the two hours, unused: over.
    vi.setSystemTime(T0 + 7201_000);
    expect((await readSession(jar)).body).toBeNull();
  });

  it("with an update age of 0 every request re-issues the session with a fresh expiry", async () => {
    setEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_SESSION_MAX_AGE: "3600", AUTH_SESSION_UPDATE_AGE: "0", AUTH_ASSURANCE: undefined });
    const { jar } = await signIn();
    for (const seconds of [1, 2, 30]) {
      vi.setSystemTime(T0 + seconds * 1000);
      const { res, body } = await readSession(jar);
      expect(Date.parse(body!.expires), `after ${seconds} s`).toBe(T0 + (seconds + 3600) * 1000);
      expect(sessionCookieExpiry(res), `after ${seconds} s`).toBe(T0 + (seconds + 3600) * 1000);
    }
    expect((await signedInRow()).expires.getTime()).toBe(T0 + 3630_000);
  });

  it("under the default update age a read a minute later does not re-issue the cookie", async () => {
    setEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_SESSION_MAX_AGE: "3600", AUTH_SESSION_UPDATE_AGE: undefined, AUTH_ASSURANCE: undefined });
    const { jar } = await signIn();
    vi.setSystemTime(T0 + 60_000);
    const { res, body } = await readSession(jar);
    expect(body!.user.email).toBe("ada@example.com");
    expect(sessionCookieExpiry(res)).toBeNull();
  });

  it("aal2 caps a longer configured max age at its hour: cookie, /auth/session and row", async () => {
    setEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_SESSION_MAX_AGE: "86400", AUTH_ASSURANCE: "aal2", AUTH_REQUIRE_MFA: "false" });
    const { jar, res } = await signIn();
    expect(sessionCookieExpiry(res)).toBe(T0 + 3600_000);
    const { body } = await readSession(jar);
    expect(Date.parse(body!.expires)).toBe(T0 + 3600_000);
    expect((await signedInRow()).expires.getTime()).toBe(T0 + 3600_000);
  });
});

describe(`a shortened max age (${dbLabel})`, () => {
  beforeEach(async () => {
    await resetDatabase();
    resetRevocations();
    vi.useFakeTimers({ toFake: ["Date"], now: T0 });
    await createUser();
  });

  it("a jwt cookie issued under 30 days is over once the operator sets two hours and two hours have passed, and a sign-out-everywhere cut-off is kept that long", async () => {
    setEnv({ AUTH_SESSION_STRATEGY: "jwt", AUTH_SESSION_MAX_AGE: undefined, AUTH_ASSURANCE: undefined });
    const { jar } = await signIn();
    setEnv({ AUTH_SESSION_STRATEGY: "jwt", AUTH_SESSION_MAX_AGE: "7200", AUTH_SESSION_UPDATE_AGE: "7200", AUTH_ASSURANCE: undefined });
    vi.setSystemTime(T0 + 3600_000);
    expect((await readSession(jar)).body!.user.email).toBe("ada@example.com");
    vi.setSystemTime(T0 + 7201_000);
    expect((await readSession(jar)).body).toBeNull();
    const { revokeUserSessions } = await import("../../../app/auth/core/session.server.ts");
    const user = await testDb().user.findFirstOrThrow();
    await revokeUserSessions(user.id);
    const cutoff = await testDb().sessionCutoff.findUniqueOrThrow({ where: { userId: user.id } });
    expect(cutoff.expires.getTime() - cutoff.notBefore.getTime()).toBe(7200_000);
  });
});
