// The section 10 policy against the real counter table (rate-limiter-flexible's Prisma store on
// Prisma 7 driver adapters), on SQLite and PostgreSQL.
import { beforeEach, describe, expect, it } from "vitest";
import { resetDatabase, testDb } from "../../support/db";
import {
  countEmailSend,
  countHit,
  DEFAULT_LIMITS,
  isLimitRefusal,
  parseLimitOverrides,
  reserveCredentialsAttempt,
  retryAfterMinutes,
  type CredentialsAttempt,
} from "../../../app/auth/core/limits.server";

beforeEach(async () => {
  await resetDatabase();
});

const limits = DEFAULT_LIMITS;

/** One attempt through the policy; "refused" or whether it went through. */
async function attempt(a: CredentialsAttempt, succeeded: boolean) {
  const r = await reserveCredentialsAttempt(limits, a);
  if (isLimitRefusal(r)) return r;
  await r.settle(succeeded);
  return null;
}

const ada = (over: Partial<CredentialsAttempt> = {}): CredentialsAttempt => ({ address: "ada@example.com", client: "198.51.100.7", deviceId: null, ...over });

describe("credentials failures", () => {
  it("refuses the 6th attempt of one (account, client) pair after 5 failures, with the window's time left", async () => {
    for (let i = 0; i < 5; i++) expect(await attempt(ada(), false)).toBeNull();
    const refused = await attempt(ada(), true);
    expect(refused).toMatchObject({ limit: "CREDENTIALS_ACCOUNT_CLIENT" });
    expect(refused!.retryAfterSeconds).toBeGreaterThan(14 * 60);
    expect(refused!.retryAfterSeconds).toBeLessThanOrEqual(15 * 60);
    expect(retryAfterMinutes(refused!.retryAfterSeconds)).toBe(15);
    // Refused attempts are not counted.
    const rows = await testDb().limitCounter.findMany();
    expect(rows.map((r) => r.points).sort()).toEqual([5, 5, 5]);
    // Nothing in the table says who: every key is the limit's name and a digest.
    for (const row of rows) expect(row.key).toMatch(/^CREDENTIALS_[A-Z_]+:[0-9a-f]{64}$/);
  });

  it("refuses a client after 100 failures over any accounts", async () => {
    for (let i = 0; i < 100; i++) expect(await attempt(ada({ address: `user${i}@example.com` }), false)).toBeNull();
    expect(await attempt(ada({ address: "fresh@example.com" }), true)).toMatchObject({ limit: "CREDENTIALS_CLIENT" });
    expect(await attempt(ada({ address: "fresh@example.com", client: "198.51.100.8" }), true)).toBeNull();
  });

  it("refuses browsers without a device cookie after 20 failures on an account from many clients, never the device", async () => {
    for (let i = 0; i < 20; i++) expect(await attempt(ada({ client: `203.0.113.${i}` }), false)).toBeNull();
    expect(await attempt(ada({ client: "203.0.113.200" }), true)).toMatchObject({ limit: "CREDENTIALS_ACCOUNT" });
    expect(await attempt(ada({ client: "203.0.113.200", deviceId: "a".repeat(32) }), true)).toBeNull();
  });

  it("counts a device cookie's failures on its own budget of 10 only", async () => {
    const device = ada({ deviceId: "b".repeat(32) });
    for (let i = 0; i < 10; i++) expect(await attempt(device, false)).toBeNull();
    expect(await attempt(device, true)).toMatchObject({ limit: "CREDENTIALS_DEVICE" });
    // The other three budgets were never touched: the same pair without the cookie still has 5.
    expect(await attempt(ada(), true)).toBeNull();
    const counted = (await testDb().limitCounter.findMany({ where: { points: { gt: 0 } } })).map((r) => r.key.split(":")[0]);
    expect(counted).toEqual(["CREDENTIALS_DEVICE"]);
  });

  it("never counts successes: 50 sign-ins in a row are never refused and leave nothing counted", async () => {
    for (let i = 0; i < 50; i++) expect(await attempt(ada(), true)).toBeNull();
    const rows = await testDb().limitCounter.findMany();
    expect(rows.filter((r) => r.points !== 0)).toEqual([]);
  });

  it("resets the pair at each success: 4 typos then the right password, 4 times over (16 of the account's 20)", async () => {
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 4; i++) expect(await attempt(ada({ client: `198.51.100.${round}` }), false)).toBeNull();
      expect(await attempt(ada({ client: `198.51.100.${round}` }), true)).toBeNull();
    }
  });

  it("counts concurrent guesses before their passwords are checked: 20 at once, at most 5 granted", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => reserveCredentialsAttempt(limits, ada())));
    expect(results.filter((r) => !isLimitRefusal(r))).toHaveLength(5);
  });

  it("keeps one family member's typos to their own pair", async () => {
    for (let i = 0; i < 5; i++) await attempt(ada(), false);
    expect(await attempt(ada(), true)).not.toBeNull();
    expect(await attempt(ada({ address: "grace@example.com" }), true)).toBeNull();
  });

  it("starts a new window once the old one has ended", async () => {
    for (let i = 0; i < 5; i++) await attempt(ada(), false);
    await testDb().limitCounter.updateMany({ data: { expire: new Date(Date.now() - 1000) } });
    expect(await attempt(ada(), false)).toBeNull();
  });
});

describe("e-mail sends and client log", () => {
  it("allows 5 sends per address and 20 per client an hour", async () => {
    for (let i = 0; i < 5; i++) expect(await countEmailSend(limits, "ada@example.com", `192.0.2.${i}`)).toBeNull();
    expect(await countEmailSend(limits, "ada@example.com", "192.0.2.99")).toMatchObject({ limit: "EMAIL_ADDRESS" });
    for (let i = 0; i < 20; i++) expect(await countEmailSend(limits, `u${i}@example.com`, "192.0.2.50")).toBeNull();
    expect(await countEmailSend(limits, "new@example.com", "192.0.2.50")).toMatchObject({ limit: "EMAIL_CLIENT" });
    // The client over its budget did not charge the address it named.
    expect(await countEmailSend(limits, "new@example.com", "192.0.2.51")).toBeNull();
  });

  it("allows 60 log lines per client a minute, then says how long to wait", async () => {
    for (let i = 0; i < 60; i++) expect(await countHit(limits, "CLIENT_LOG", "192.0.2.1")).toBeNull();
    const refused = await countHit(limits, "CLIENT_LOG", "192.0.2.1");
    expect(refused).toMatchObject({ limit: "CLIENT_LOG" });
    expect(refused!.retryAfterSeconds).toBeGreaterThan(50);
    expect(refused!.retryAfterSeconds).toBeLessThanOrEqual(60);
  });
});

describe("AUTH_RATE_LIMIT_<NAME>", () => {
  it("overrides one limit and keeps the others", () => {
    const { limits: parsed, problems } = parseLimitOverrides({ AUTH_RATE_LIMIT_CREDENTIALS_ACCOUNT_CLIENT: "3/60", OTHER: "x" });
    expect(problems).toEqual([]);
    expect(parsed.CREDENTIALS_ACCOUNT_CLIENT).toEqual({ count: 3, seconds: 60 });
    expect(parsed.CREDENTIALS_CLIENT).toEqual(DEFAULT_LIMITS.CREDENTIALS_CLIENT);
  });

  it.each(["", "5", "5/", "/60", "0/60", "5/0", "-1/60", "5/60/1", "1.5/60", "five/60", "99999999/60", "5/99999999"])(
    "names the variable for the bad value %j",
    (value) => {
      const { problems } = parseLimitOverrides({ AUTH_RATE_LIMIT_EMAIL_CLIENT: value });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain("AUTH_RATE_LIMIT_EMAIL_CLIENT");
    },
  );

  it("names an unknown limit", () => {
    expect(parseLimitOverrides({ AUTH_RATE_LIMIT_CREDENTIAL_CLIENT: "5/60" }).problems[0]).toMatch(/^AUTH_RATE_LIMIT_CREDENTIAL_CLIENT: unknown limit/);
  });

  it("uses the overridden numbers", async () => {
    const { limits: two } = parseLimitOverrides({ AUTH_RATE_LIMIT_CREDENTIALS_ACCOUNT_CLIENT: "2/60" });
    for (let i = 0; i < 2; i++) {
      const r = await reserveCredentialsAttempt(two, ada());
      expect(isLimitRefusal(r)).toBe(false);
    }
    const refused = await reserveCredentialsAttempt(two, ada());
    expect(refused).toMatchObject({ limit: "CREDENTIALS_ACCOUNT_CLIENT" });
    expect(isLimitRefusal(refused) && refused.retryAfterSeconds).toBeLessThanOrEqual(60);
  });
});
