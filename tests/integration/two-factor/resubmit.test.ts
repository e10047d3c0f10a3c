// The owner's double click: a second submission of a pending sign-in that a code
// already finished creates no second session, and is neither a wrong code nor a rate limit in the
// owner's activity — it goes where the sign-in was going. An attacker replaying the finished
// pending cookie gets no session either way.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as twoFactorRoute from "../../../app/routes/auth/two-factor.tsx";
import { createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, post } from "../../support/http.ts";
import { advance, codeAt, enrolled, firstFactor, PENDING, SESSION, useStepClock } from "./helpers.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

const startsSession = (res: Response) => res.headers.getSetCookie().some((c) => c.startsWith(`${SESSION}=`) && !/max-age=0/i.test(c));
const eventTypes = async () => (await testDb().authEvent.findMany({ select: { type: true } })).map((e) => e.type);

/** Both submissions leave the browser with the cookies it had when the form was shown. */
async function submissions(jar: CookieJar, fields: Record<string, string>, count: number, { together = false } = {}) {
  const csrfToken = await fetchCsrf(jar);
  const send = () => callRoute(twoFactorRoute.action, post("/auth/two-factor", { csrfToken, ...fields }, { jar }));
  if (together) return Promise.all(Array.from({ length: count }, send));
  const results: Response[] = [];
  for (let i = 0; i < count; i++) results.push(await send());
  return results;
}

describe(`a finished pending sign-in submitted again (${dbLabel})`, () => {
  it("the owner double-clicks Verify: one session; the second answer goes to the callback URL, counts nothing and records no failure", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar, "ada@example.com", { callbackUrl: "/account" });
    const [first, second] = await submissions(jar, { code: codeAt(secret) }, 2);
    expect(first).toHaveRedirect("/account");
    expect(startsSession(first!)).toBe(true);
    expect(second).toHaveRedirect("/account");
    expect(startsSession(second!)).toBe(false);
    expect(second!.headers.getSetCookie().some((c) => c.startsWith(`${PENDING}=`) && /max-age=0/i.test(c))).toBe(true);
    const events = await eventTypes();
    expect(events).not.toContain("rate-limited");
    expect(events).not.toContain("two-factor-failed");
    expect(events.filter((t) => t === "signin")).toHaveLength(2); // enrolled()'s and this one
  });

  it("the same with a recovery code and in JSON mode: {url} of the callback URL, no second session", async () => {
    const { recoveryCodes } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar, "ada@example.com", { callbackUrl: "/account" });
    const csrfToken = await fetchCsrf(jar);
    const send = () => callRoute(twoFactorRoute.action, post("/auth/two-factor", { csrfToken, code: recoveryCodes[0]!, json: "true" }, { jar }));
    expect(startsSession(await send())).toBe(true);
    const again = await send();
    expect(startsSession(again)).toBe(false);
    expect(await again.json()).toEqual({ url: "http://localhost:3000/account" });
    expect(await eventTypes()).not.toContain("two-factor-failed");
  });

  it("the same code sent twice at once from one browser: exactly one session, and never a rate limit", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    const results = await submissions(jar, { code: codeAt(secret) }, 2, { together: true });
    expect(results.filter(startsSession)).toHaveLength(1);
    expect(await eventTypes()).not.toContain("rate-limited");
  });

  it("an attacker replaying the finished pending cookie, with a wrong code or the next right one, gets no session and no guesses", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    const stolen = jar.get(PENDING)!;
    const [done] = await submissions(jar, { code: codeAt(secret) }, 1);
    expect(startsSession(done!)).toBe(true);
    advance(30);
    const attacker = new CookieJar({ [PENDING]: stolen });
    const replays = await submissions(attacker, { code: "000000" }, 6);
    replays.push(...(await submissions(attacker, { code: codeAt(secret) }, 1)));
    for (const res of replays) expect(startsSession(res)).toBe(false);
    // The next step's code was not spent by the replay: the owner can still use it.
    const owner = new CookieJar();
    await firstFactor(owner);
    expect(startsSession((await submissions(owner, { code: codeAt(secret) }, 1))[0]!)).toBe(true);
  });
});
