// An outside attacker's review of the second factor: every way to a session
// for a TOTP user that skips the code, replays of codes and of pending sign-ins, and the honest
// owner beside each. Each test is a reproduction: it failed before its fix, or it pins a path
// that was checked and found closed.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as account from "../../../app/routes/account.tsx";
import * as sessionRoute from "../../../app/routes/auth/session.ts";
import * as webauthnOptions from "../../../app/routes/auth/webauthn-options.ts";
import { createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { accountIntent, advance, codeAt, enrolled, firstFactor, PENDING, SESSION, submitCode, useStepClock } from "./helpers.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

async function sessionOf(jar: CookieJar) {
  const res = await callRoute(sessionRoute.loader, get("/auth/session", { jar }));
  return (await res.json()) as { user: { email: string } } | null;
}

describe(`no session without the second factor (${dbLabel})`, () => {
  it("a pending sign-in is no session: session read, session update POST and passkey registration options all refuse it", async () => {
    await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    expect(jar.get(PENDING)).toBeTruthy();
    expect(await sessionOf(jar)).toBeNull();
    const csrfToken = await fetchCsrf(jar);
    const update = await callRoute(sessionRoute.action, post("/auth/session", { csrfToken, data: { name: "Mallory" } }, { jar, json: true }));
    expect(update).not.toHaveSessionCookie();
    expect(await sessionOf(jar)).toBeNull();
    const options = await callRoute(webauthnOptions.loader, get("/auth/webauthn-options/passkey?action=register", { jar }), { provider: "passkey" });
    expect(options.status).toBeGreaterThanOrEqual(400);
    expect(await testDb().session.count()).toBe(1); // the owner's own session from enrolled() only
  });

  it("a pending cookie replayed after its success cannot start a second session, even with the next step's code", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    const stolen = jar.get(PENDING)!;
    expect(await submitCode(jar, codeAt(secret))).toHaveSessionCookie();
    advance(30);
    const attacker = new CookieJar();
    attacker.set(PENDING, stolen);
    const replay = await submitCode(attacker, codeAt(secret));
    expect(replay).not.toHaveSessionCookie();
    expect(await sessionOf(attacker)).toBeNull();
  });

  it("the same TOTP code raced on two pending sign-ins (a phished code): exactly one session", async () => {
    const { secret } = await enrolled();
    const owner = new CookieJar();
    const attacker = new CookieJar();
    await firstFactor(owner);
    await firstFactor(attacker);
    const code = codeAt(secret);
    const results = await Promise.all([submitCode(owner, code), submitCode(attacker, code), submitCode(owner, code), submitCode(attacker, code)]);
    expect(results.filter((r) => r.headers.getSetCookie().some((c) => c.startsWith(`${SESSION}=`) && !/max-age=0/i.test(c)))).toHaveLength(1);
  });

  it("a pending sign-in minted for Ada cannot be finished with Mallory's own code or recovery code", async () => {
    await enrolled();
    await createUser("mallory@example.com", "Mallory");
    const mallory = await enrolled("mallory@example.com");
    const jar = new CookieJar();
    await firstFactor(jar, "ada@example.com");
    for (const code of [codeAt(mallory.secret), mallory.recoveryCodes[0]!]) {
      const res = await submitCode(jar, code);
      expect(res).not.toHaveSessionCookie();
    }
    expect(await sessionOf(jar)).toBeNull();
  });

  it("a code field that is not a string (JSON array, object, huge) is a wrong code, never a 5xx", async () => {
    await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    for (const code of [["123456"], { a: 1 }, "9".repeat(100_000)]) {
      const csrfToken = await fetchCsrf(jar);
      const res = await callRoute(
        (await import("../../../app/routes/auth/two-factor.tsx")).action,
        post("/auth/two-factor", { csrfToken, code } as never, { jar, json: true }),
      );
      expect(res.status).toBeLessThan(500);
      expect(res).not.toHaveSessionCookie();
    }
  });
});

describe(`the recovery codes and the secret are never cached (${dbLabel})`, () => {
  it("/account, whose answers show the TOTP secret and the recovery codes, is Cache-Control: private, no-store", async () => {
    const { jar, secret } = await enrolled();
    const res = await accountIntent(jar, { intent: "recovery-codes", code: codeAt(secret) });
    expect(((await res.json()) as { recoveryCodes: string[] }).recoveryCodes).toHaveLength(10);
    expect(typeof account.headers).toBe("function");
    const parentHeaders = new Headers({ "X-Frame-Options": "DENY" });
    const headers = new Headers((account as { headers: (args: never) => HeadersInit }).headers({ parentHeaders, actionHeaders: new Headers(), loaderHeaders: new Headers(), errorHeaders: undefined } as never));
    expect(headers.get("Cache-Control")).toBe("private, no-store");
    expect(headers.get("X-Frame-Options")).toBe("DENY");
  });
});
