// AUTH_ASSURANCE (docs/decisions/082): aal2 idles a session out after an hour
// of disuse and ends it a day after its sign-in, whatever its use; e-mailed links and codes live ten
// minutes; AUTH_REQUIRE_MFA defaults to true (an explicit false wins). aal1 keeps today's lifetimes.
// Only Date is faked: the clock jumps, database I/O keeps its real timers.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigError, getConfig, loadConfig } from "../../../app/auth/core/config.server.ts";
import { resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as forgotRoute from "../../../app/routes/auth/forgot-password";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { envPerTest } from "../../support/per-test.ts";
import { useSmtpSink, requestLink } from "../email/helpers.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = new Date("2026-11-26T08:00:00Z").getTime();

const setEnv = envPerTest();
afterEach(() => {
  vi.useRealTimers();
  resetRevocations();
});

async function signedInEmail(jar: CookieJar): Promise<string | null> {
  const res = await callRoute(sessionRoute.loader, get("/auth/session", { jar }));
  jar.apply(res);
  return ((await res.json()) as { user: { email: string } } | null)?.user?.email ?? null;
}

const at = (ms: number) => vi.setSystemTime(T0 + ms);

describe("the configuration", () => {
  it("an operator's typo in AUTH_ASSURANCE or AUTH_REQUIRE_MFA stops the start with the variable's name", () => {
    expect(() => loadConfig({ ...process.env, AUTH_ASSURANCE: "aal3" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...process.env, AUTH_ASSURANCE: "aal3" })).toThrow(/AUTH_ASSURANCE must be "aal1" or "aal2"/);
    expect(() => loadConfig({ ...process.env, AUTH_REQUIRE_MFA: "yes" })).toThrow(/AUTH_REQUIRE_MFA must be "true" or "false"/);
  });

  it("aal2 turns AUTH_REQUIRE_MFA on unless it is set to false; aal1 leaves it off unless set to true", () => {
    const env = { ...process.env, AUTH_ASSURANCE: undefined, AUTH_REQUIRE_MFA: undefined };
    expect(loadConfig({ ...env, AUTH_ASSURANCE: "aal2" }).requireMfa).toBe(true);
    expect(loadConfig({ ...env, AUTH_ASSURANCE: "aal2", AUTH_REQUIRE_MFA: "false" }).requireMfa).toBe(false);
    expect(loadConfig(env).requireMfa).toBe(false);
    expect(loadConfig({ ...env, AUTH_REQUIRE_MFA: "true" }).requireMfa).toBe(true);
  });

  it("aal2 caps every lifetime, keeps a shorter one the operator set, and aal1 keeps today's", () => {
    const env = { ...process.env, AUTH_ASSURANCE: undefined, AUTH_SESSION_ABSOLUTE_MAX_AGE: undefined, AUTH_EMAIL_MAX_AGE: undefined };
    expect(loadConfig(env)).toMatchObject({
      assurance: "aal1",
      sessionMaxAge: 30 * 24 * 3600,
      sessionUpdateAge: 24 * 3600,
      sessionAbsoluteMaxAge: null,
      emailTokenMaxAge: 24 * 3600,
      emailCodeMaxAge: 600,
      passwordResetLinkMaxAge: 3600,
    });
    expect(loadConfig({ ...env, AUTH_ASSURANCE: "aal2" })).toMatchObject({
      assurance: "aal2",
      sessionMaxAge: 3600,
      sessionAbsoluteMaxAge: 24 * 3600,
      emailTokenMaxAge: 600,
      emailCodeMaxAge: 600,
      passwordResetLinkMaxAge: 600,
    });
    expect(loadConfig({ ...env, AUTH_ASSURANCE: "aal2", AUTH_SESSION_ABSOLUTE_MAX_AGE: "7200", AUTH_EMAIL_MAX_AGE: "300" })).toMatchObject({
      sessionAbsoluteMaxAge: 7200,
      emailTokenMaxAge: 300,
      emailCodeMaxAge: 300,
    });
    expect(loadConfig({ ...env, AUTH_ASSURANCE: "aal2", AUTH_SESSION_ABSOLUTE_MAX_AGE: "999999" }).sessionAbsoluteMaxAge).toBe(24 * 3600);
  });
});

describe.each(["jwt", "database"] as const)(`aal2 sessions, %s (${dbLabel})`, (strategy) => {
  beforeEach(async () => {
    await resetDatabase();
    resetRevocations();
    // AUTH_REQUIRE_MFA=false: these tests look at lifetimes only (the enrolment gate has its own).
    setEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_ASSURANCE: "aal2", AUTH_REQUIRE_MFA: "false" });
    vi.useFakeTimers({ toFake: ["Date"], now: T0 });
    await createUser();
  });

  it("a session left alone for an hour is over; one used within the hour keeps going", async () => {
    const { jar: idle } = await signIn();
    const { jar: busy } = await signIn();
    at(40 * MINUTE);
    expect(await signedInEmail(busy)).toBe("ada@example.com");
    at(61 * MINUTE);
    expect(await signedInEmail(idle)).toBeNull();
    at(95 * MINUTE);
    expect(await signedInEmail(busy)).toBe("ada@example.com");
  });

  it("a session used all day long still ends 24 hours after its sign-in", async () => {
    const { jar } = await signIn();
    for (let t = 50 * MINUTE; t < 24 * HOUR; t += 50 * MINUTE) {
      at(t);
      expect(await signedInEmail(jar)).toBe("ada@example.com");
    }
    at(24 * HOUR + MINUTE);
    expect(await signedInEmail(jar)).toBeNull();
  });

  it("under aal1 the same hour of disuse changes nothing", async () => {
    setEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_ASSURANCE: "aal1" });
    const { jar } = await signIn();
    at(5 * HOUR);
    expect(await signedInEmail(jar)).toBe("ada@example.com");
  });
});

describe(`aal2 e-mailed links and codes (${dbLabel})`, () => {
  useSmtpSink({ AUTH_ASSURANCE: "aal2", AUTH_REQUIRE_MFA: "false" });

  it("a sign-in link and its code are stored to live ten minutes", async () => {
    await createUser();
    const before = Date.now();
    const res = await requestLink(new CookieJar(), { email: "ada@example.com" });
    expect(res.status).toBe(302);
    const tokens = await testDb().verificationToken.findMany();
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(token.expires.getTime()).toBeLessThanOrEqual(before + 10 * MINUTE + 5_000);
    expect(getConfig().emailCodeMaxAge).toBe(600);
  });

  it("a forgotten-password link lives ten minutes, not an hour", async () => {
    await createUser();
    const jar = new CookieJar();
    const before = Date.now();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(forgotRoute.action, post("/auth/forgot-password", { csrfToken, email: "ada@example.com" }, { jar }));
    expect(res.status).toBe(302);
    const tokens = await testDb().verificationToken.findMany();
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(token.expires.getTime()).toBeLessThanOrEqual(before + 10 * MINUTE + 5_000);
  });
});
