// Over the real route: POST /auth/callback/credentials with real CSRF tokens,
// real cookies and the client address the production server stamps on each request.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as callbackRoute from "../../../app/routes/auth/callback";
import { DEFAULT_LIMITS } from "../../../app/auth/core/limits.server";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, post, setCookieHeaders } from "../../support/http";

const SESSION = "authjs.session-token";
const DEVICE = "authjs.device";

beforeEach(async () => {
  await resetDatabase();
});
afterEach(() => {
  vi.useRealTimers();
});

/** One credentials POST from `client` (the TCP peer's address), with the jar's cookies. */
async function attempt(jar: CookieJar, email: string, password: string, client: string): Promise<Response> {
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/credentials", { csrfToken, email, password }, { jar, headers: { "X-Vestibule-Remote-Addr": client } }),
    { provider: "credentials" },
  );
  jar.apply(res);
  return res;
}

/** Successful sign-ins in a row by the owner (see the test). */
const HONEST_SIGN_INS = 25;

const errorOf = (res: Response) => new URL(res.headers.get("Location")!).searchParams.get("error");

describe(`an honest owner (${dbLabel})`, () => {
  // 25: more than any budget a success could wrongly spend (the account's 20 for browsers without
  // its device cookie; 10 per device cookie, 5 per pair), so past it no further budget is left to
  // cross; each success is an Argon2 check (50 before). docs/decisions/088-test-suite-time.md
  it(`signs in ${HONEST_SIGN_INS} times in a row from one client and one browser, never refused`, async () => {
    const { CREDENTIALS_ACCOUNT, CREDENTIALS_DEVICE, CREDENTIALS_ACCOUNT_CLIENT } = DEFAULT_LIMITS;
    expect(HONEST_SIGN_INS).toBeGreaterThan(Math.max(CREDENTIALS_ACCOUNT.count, CREDENTIALS_DEVICE.count, CREDENTIALS_ACCOUNT_CLIENT.count));
    await createUser();
    const jar = new CookieJar();
    for (let i = 0; i < HONEST_SIGN_INS; i++) {
      jar.delete(SESSION);
      const res = await attempt(jar, "ada@example.com", PASSWORD, "192.0.2.10");
      expect(res.headers.get("Location")).toBe("http://localhost:3000/");
      expect(jar.get(SESSION)).toBeTruthy();
    }
    // As many fresh browsers (no device cookie) from one client: no more refused than the one browser.
    for (let i = 0; i < HONEST_SIGN_INS; i++) expect(errorOf(await attempt(new CookieJar(), "ada@example.com", PASSWORD, "192.0.2.10"))).toBeNull();
    expect(await testDb().limitCounter.count({ where: { points: { gt: 0 } } })).toBe(0);
    // Dozens of hashed sign-ins: on a loaded machine this outlasts the default 30 s, and a
    // timed-out test keeps running into the next one.
  }, 120_000);
});

describe(`an honest script signing in concurrently (${dbLabel})`, () => {
  it("30 correct sign-ins at once from one client leave nothing counted: the owner still signs in from a fresh browser elsewhere", async () => {
    await createUser();
    // A script without a cookie jar: no device cookie, one client address, all at once. Those
    // over the pair's budget are refused before their passwords are checked (the
    // defence against concurrent guesses), and a refused attempt must not count.
    const answers = await Promise.all(Array.from({ length: 30 }, () => attempt(new CookieJar(), "ada@example.com", PASSWORD, "192.0.2.10")));
    expect(answers.filter((r) => errorOf(r) === null).length).toBeGreaterThanOrEqual(1);
    expect(await testDb().limitCounter.count({ where: { points: { gt: 0 } } })).toBe(0);
    // The account's budget for browsers without its device cookie (20 an hour) is untouched.
    expect(errorOf(await attempt(new CookieJar(), "ada@example.com", PASSWORD, "198.51.100.99"))).toBeNull();
    for (let i = 0; i < 5; i++) expect(errorOf(await attempt(new CookieJar(), "ada@example.com", PASSWORD, "192.0.2.10"))).toBeNull();
  });
});

describe(`an attacker guessing concurrently (${dbLabel})`, () => {
  it("30 wrong guesses at once from one client: 5 are checked and counted, the rest refused unchecked", async () => {
    await createUser();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(new CookieJar(), "ada@example.com", `guess-${i}`, "203.0.113.5")));
    const pair = DEFAULT_LIMITS.CREDENTIALS_ACCOUNT_CLIENT.count;
    expect(answers.filter((r) => errorOf(r) === "CredentialsSignin")).toHaveLength(pair);
    expect(answers.filter((r) => errorOf(r) === "RateLimited")).toHaveLength(30 - pair);
    // The checked failures stay counted: the pair is spent, the account holds exactly those 5.
    expect(errorOf(await attempt(new CookieJar(), "ada@example.com", "guess-again", "203.0.113.5"))).toBe("RateLimited");
    const account = await testDb().limitCounter.findFirstOrThrow({ where: { key: { startsWith: "CREDENTIALS_ACCOUNT:" } } });
    expect(account.points).toBe(pair);
  });
});

describe(`an attacker failing on purpose against the owner's account (${dbLabel})`, () => {
  it("200 failures from many addresses and from the owner's own address leave the owner's browser signing in", async () => {
    await createUser();
    const owner = new CookieJar();
    const ownerAddress = "198.51.100.7";
    await attempt(owner, "ada@example.com", PASSWORD, ownerAddress);
    expect(owner.get(DEVICE)).toBeTruthy();
    owner.delete(SESSION);

    const answers: Record<string, number> = {};
    for (let i = 0; i < 200; i++) {
      // Every other attempt from the owner's own address (same network, same NAT), the rest spread.
      const from = i % 2 === 0 ? ownerAddress : `203.0.113.${i % 250}`;
      const error = errorOf(await attempt(new CookieJar(), "ada@example.com", `guess-${i}`, from)) ?? "none";
      answers[error] = (answers[error] ?? 0) + 1;
    }
    // Only the account's 20 (no device cookie) were ever checked; the rest were refused unchecked.
    expect(answers).toEqual({ CredentialsSignin: DEFAULT_LIMITS.CREDENTIALS_ACCOUNT.count, RateLimited: 200 - DEFAULT_LIMITS.CREDENTIALS_ACCOUNT.count });
    // A browser without the account's device cookie, even at the owner's address, is refused…
    expect(errorOf(await attempt(new CookieJar(), "ada@example.com", PASSWORD, ownerAddress))).toBe("RateLimited");
    // …the owner's browser is not, from their own address or anywhere else.
    const res = await attempt(owner, "ada@example.com", PASSWORD, ownerAddress);
    expect(res.headers.get("Location")).toBe("http://localhost:3000/");
    expect(owner.get(SESSION)).toBeTruthy();
    owner.delete(SESSION);
    expect(errorOf(await attempt(owner, "ada@example.com", PASSWORD, "192.0.2.200"))).toBeNull();
    expect(owner.get(SESSION)).toBeTruthy();
  });
});

describe(`RateLimited for known and unknown accounts (${dbLabel})`, () => {
  /** What a refusal shows: status, Location, Retry-After and which cookies it sets. */
  const shape = (res: Response) => ({
    status: res.status,
    location: res.headers.get("Location"),
    retryAfter: res.headers.get("Retry-After"),
    cookies: setCookieHeaders(res)
      .map((c) => c.slice(0, c.indexOf("=")))
      .sort(),
  });

  it.each([
    ["the (account, client) pair", (_i: number) => "192.0.2.1", DEFAULT_LIMITS.CREDENTIALS_ACCOUNT_CLIENT.count],
    ["the account", (i: number) => `192.0.2.${i + 1}`, DEFAULT_LIMITS.CREDENTIALS_ACCOUNT.count],
  ])("are byte-identical once %s is over its limit", async (_what, clientFor, failures) => {
    // One instant for the whole test, so both windows have exactly the same time left.
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-25T12:00:00Z") });
    await createUser("known@example.com");
    const refusals: Response[] = [];
    for (const email of ["known@example.com", "unknown@example.com"]) {
      for (let i = 0; i < failures; i++) expect(errorOf(await attempt(new CookieJar(), email, "wrong password", clientFor(i)))).toBe("CredentialsSignin");
      refusals.push(await attempt(new CookieJar(), email, "wrong password", clientFor(failures)));
    }
    const [known, unknown] = refusals.map(shape);
    expect(known!.location).toMatch(/\/auth\/signin\?error=RateLimited&for=password&minutes=\d+(&limit=account)?$/);
    expect(Number(known!.retryAfter)).toBeGreaterThan(0);
    expect(unknown).toEqual(known);
    expect(await refusals[1]!.text()).toBe(await refusals[0]!.text());
  });
});

describe(`IPv6 clients share one budget per /64 (${dbLabel})`, () => {
  it("rotating addresses within one /64 spends one (account, client) budget; another /64 has its own", async () => {
    await createUser();
    const pair = DEFAULT_LIMITS.CREDENTIALS_ACCOUNT_CLIENT.count;
    // A host picks any address in its /64 at will (privacy extensions, or on purpose).
    for (let i = 0; i < pair; i++) {
      expect(errorOf(await attempt(new CookieJar(), "ada@example.com", `guess-${i}`, `2001:db8:a:b:${i + 1}:0:0:${((i + 1) * 7919).toString(16)}`))).toBe(
        "CredentialsSignin",
      );
    }
    expect(errorOf(await attempt(new CookieJar(), "ada@example.com", PASSWORD, "[2001:DB8:A:B:FFFF:FFFF:FFFF:FFFF]:443"))).toBe("RateLimited");
    // The neighbouring /64 (and an IPv4 client) are other clients.
    expect(errorOf(await attempt(new CookieJar(), "ada@example.com", PASSWORD, "2001:db8:a:c::1"))).toBeNull();
    // The audit trail keeps each full address, not the prefix.
    const failed = await testDb().authEvent.findMany({ where: { type: "signin-failed" } });
    expect(failed.map((e) => e.ip).sort()).toEqual(Array.from({ length: pair }, (_, i) => `2001:db8:a:b:${i + 1}::${((i + 1) * 7919).toString(16)}`));
    const refused = await testDb().authEvent.findMany({ where: { type: "rate-limited" } });
    expect(refused.map((e) => e.ip)).toEqual(["2001:db8:a:b:ffff:ffff:ffff:ffff"]);
  });
});
