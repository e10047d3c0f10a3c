// The gate: with TOTP on, a password sign-in stops after its first
// factor — no session, a sealed authjs.two-factor cookie (300 s) and /auth/two-factor — and only a
// code finishes it, through the normal session path. Each code works once, ±1 step, recovery codes
// once; five wrong codes end the pending sign-in, twenty end the account's budget for the hour.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { decodeJwt } from "../../../app/auth/core/jwt.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { completeSignIn } from "../../../app/auth/signin/flow.server.ts";
import { toSessionUser } from "../../../app/auth/accounts/users.server.ts";
import * as sessionRoute from "../../../app/routes/auth/session.ts";
import * as signinRoute from "../../../app/routes/auth/signin.tsx";
import { createUser, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, ORIGIN } from "../../support/http.ts";
import { advance, codeAt, enrolled, errorOf, firstFactor, isRefusal, refusalText, PENDING, SESSION, submitCode, twoFactorPage, useStepClock } from "./helpers.ts";

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

const DEVICE = "authjs.device";

describe(`the second-factor gate (${dbLabel})`, () => {
  it("a password sign-in stops after the first factor: no session, a sealed 300 s pending cookie, the two-factor page", async () => {
    await enrolled();
    const sessionsBefore = await testDb().session.count();
    const jar = new CookieJar();
    const res = await firstFactor(jar, "ada@example.com", { callbackUrl: "/account?tab=1" });
    expect(res).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(res).not.toHaveSessionCookie();
    const pending = res.headers.getSetCookie().find((c) => c.startsWith(`${PENDING}=`))!;
    expect(pending).toMatch(/Max-Age=300/);
    expect(pending).toMatch(/HttpOnly/);
    expect(pending).toMatch(/SameSite=Lax/);
    expect(pending).toMatch(/Path=\//);
    expect(jar.get(DEVICE)).toBeUndefined();
    expect(await sessionOf(jar)).toBeNull();
    // Sealed: nothing readable, and it names the user, the method, the callback URL, the time.
    const raw = decodeURIComponent(jar.get(PENDING)!);
    expect(raw).not.toContain("ada");
    const claims = await decodeJwt({ token: raw, secrets: getConfig().secrets, salt: PENDING });
    expect(claims).toMatchObject({ mth: "credentials", ff: "pwd", cb: `${ORIGIN}/account?tab=1` });
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(await testDb().session.count()).toBe(sessionsBefore);

    const page = await twoFactorPage(jar);
    expect(page.status).toBe(200);
    expect(((await page.json()) as { csrfToken: string }).csrfToken).toMatch(/^[0-9a-f]{64}$/);
  });

  it("the right code creates the session through the normal path: callbackUrl, device cookie, audit, factors recorded", async () => {
    const { secret, userId } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar, "ada@example.com", { callbackUrl: "/account" });
    const res = await submitCode(jar, codeAt(secret));
    expect(res).toHaveRedirect(`${ORIGIN}/account`);
    expect(res).toHaveSessionCookie();
    expect(res.headers.getSetCookie().some((c) => c.startsWith(`${PENDING}=;`) && /Max-Age=0/.test(c))).toBe(true);
    expect(jar.get(PENDING)).toBeUndefined();
    expect(jar.get(DEVICE)).toBeTruthy();
    expect((await sessionOf(jar))?.user.email).toBe("ada@example.com");
    const claims = await decodeJwt({ token: decodeURIComponent(jar.get(SESSION)!), secrets: getConfig().secrets, salt: SESSION });
    expect(claims.amr).toEqual(["pwd", "otp", "mfa"]);
    const rows = await testDb().session.findMany({ where: { userId, method: "credentials" }, orderBy: { createdAt: "desc" } });
    expect(rows[0]!.factors).toBe("pwd otp mfa");
    const signin = await testDb().authEvent.findFirstOrThrow({ where: { type: "signin", userId }, orderBy: { at: "desc" } });
    expect(JSON.parse(signin.detail!)).toMatchObject({ provider: "credentials", factors: ["pwd", "otp", "mfa"] });
  });

  it("Back after a finished two-factor sign-in shows only the signed-in state with the way on, never 'your sign-in expired' beside it", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar, "ada@example.com", { callbackUrl: "/account" });
    expect(await submitCode(jar, codeAt(secret))).toHaveSessionCookie();
    const back = await twoFactorPage(jar);
    expect(back).toHaveRedirect(`${ORIGIN}/auth/signin`);
    const page = (await (await callRoute(signinRoute.loader, get("/auth/signin", { jar }))).json()) as { signedInAs: unknown; error: unknown };
    expect(page.signedInAs).toBeTruthy();
    expect(page.error).toBeNull();
    // Signed out, the same Back is the expired sign-in, as before.
    expect(errorOf(await twoFactorPage(new CookieJar()))).toBe("TwoFactorExpired");
  });

  it("database sessions record the factors on their row too", async () => {
    const undo = withEnv({ AUTH_SESSION_STRATEGY: "database" });
    try {
      const { secret, userId } = await enrolled();
      const jar = new CookieJar();
      await firstFactor(jar);
      expect(await submitCode(jar, codeAt(secret))).toHaveSessionCookie();
      const row = await testDb().session.findFirstOrThrow({ where: { userId, kind: "database" }, orderBy: { createdAt: "desc" } });
      expect(row.factors).toBe("pwd otp mfa");
      expect((await sessionOf(jar))?.user.email).toBe("ada@example.com");
    } finally {
      undo();
    }
  });

  it("a code is accepted once: replayed on a second pending sign-in it is refused", async () => {
    const { secret } = await enrolled();
    const code = codeAt(secret);
    const first = new CookieJar();
    await firstFactor(first);
    expect(await submitCode(first, code)).toHaveSessionCookie();
    const second = new CookieJar();
    await firstFactor(second);
    const replay = await submitCode(second, code);
    expect(isRefusal(replay)).toBe(true);
    expect(replay).not.toHaveSessionCookie();
    // A code of the next step works.
    advance(30);
    expect(await submitCode(second, codeAt(secret))).toHaveSessionCookie();
  });

  it("±1 time step is accepted, ±2 is refused", async () => {
    const { secret } = await enrolled();
    for (const offset of [2, -2]) {
      const jar = new CookieJar();
      await firstFactor(jar);
      expect(isRefusal(await submitCode(jar, codeAt(secret, offset))), `offset ${offset}`).toBe(true);
    }
    // The step before now (an app whose clock is behind; the enrolment used the step before the
    // current one, so the clock moves on once more first) — then the step after now.
    advance(30);
    const behind = new CookieJar();
    await firstFactor(behind);
    expect(await submitCode(behind, codeAt(secret, -1))).toHaveSessionCookie();
    const ahead = new CookieJar();
    await firstFactor(ahead);
    expect(await submitCode(ahead, codeAt(secret, 1))).toHaveSessionCookie();
  });

  it("a recovery code works once (any case, with or without its hyphen) and is recorded", async () => {
    const { recoveryCodes, userId } = await enrolled();
    const code = recoveryCodes[0]!;
    const jar = new CookieJar();
    await firstFactor(jar);
    const res = await submitCode(jar, ` ${code.replace("-", "").toUpperCase()} `);
    expect(res).toHaveSessionCookie();
    const claims = await decodeJwt({ token: decodeURIComponent(jar.get(SESSION)!), secrets: getConfig().secrets, salt: SESSION });
    expect(claims.amr).toEqual(["pwd", "rcv", "mfa"]);
    const used = await testDb().authEvent.findFirstOrThrow({ where: { type: "recovery-code-used", userId } });
    expect(JSON.parse(used.detail!)).toMatchObject({ left: 9 });
    expect(used.detail).not.toContain(code);
    const again = new CookieJar();
    await firstFactor(again);
    expect(isRefusal(await submitCode(again, code))).toBe(true);
    expect(await testDb().recoveryCode.count({ where: { usedAt: null } })).toBe(9);
  });

  it("a visitor with an Arabic keyboard types the authenticator code, or a recovery code, in Arabic-Indic digits: each signs her in", async () => {
    const arabic = (text: string) => text.replace(/[0-9]/g, (d) => String.fromCodePoint(0x0660 + Number(d)));
    const { secret, recoveryCodes } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    const totp = await submitCode(jar, arabic(codeAt(secret)));
    expect(totp).toHaveSessionCookie();
    const withDigits = recoveryCodes.find((c) => /[0-9]/.test(c))!;
    const other = new CookieJar();
    await firstFactor(other);
    expect(await submitCode(other, arabic(withDigits))).toHaveSessionCookie();
    expect(await testDb().recoveryCode.count({ where: { usedAt: null } })).toBe(9);
  });

  it("the same recovery code sent twice at once is spent once", async () => {
    const { recoveryCodes } = await enrolled();
    const a = new CookieJar();
    const b = new CookieJar();
    await firstFactor(a);
    await firstFactor(b);
    const results = await Promise.all([submitCode(a, recoveryCodes[2]!), submitCode(b, recoveryCodes[2]!)]);
    expect(results.filter((r) => r.status === 302 && !isRefusal(r))).toHaveLength(1);
    expect(results.filter(isRefusal)).toHaveLength(1);
  });

  it("wrong codes come back to the page (a redirect) with the tries left; the fifth ends the pending sign-in (RateLimited, cookie cleared)", async () => {
    const { secret, userId } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    for (let left = 4; left >= 1; left--) {
      const res = await submitCode(jar, "000000");
      expect(await refusalText(jar, res)).toContain(`${left} ${left === 1 ? "try" : "tries"} left`);
      expect(jar.get(PENDING)).toBeTruthy();
    }
    const kept = jar.get(PENDING)!;
    const fifth = await submitCode(jar, "000000");
    expect(fifth).toHaveErrorRedirect("RateLimited");
    expect(Number(fifth.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(jar.get(PENDING)).toBeUndefined();
    expect(fifth).not.toHaveSessionCookie();
    // The ended pending sign-in, replayed with a right code, still gets no session.
    jar.set(PENDING, kept);
    const replay = await submitCode(jar, codeAt(secret));
    expect(replay).toHaveErrorRedirect("RateLimited");
    expect(replay).not.toHaveSessionCookie();
    expect(await testDb().authEvent.count({ where: { type: "two-factor-failed", userId } })).toBe(5);
    // The owner signs in again with the password and a right code: a new pending sign-in, a new budget.
    const fresh = new CookieJar();
    await firstFactor(fresh);
    expect(await submitCode(fresh, codeAt(secret))).toHaveSessionCookie();
  });

  it("ten wrong codes sent at once on one pending sign-in: no more than five are checked, and it ends", async () => {
    const { secret, userId } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    const kept = jar.get(PENDING)!;
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        const copy = new CookieJar().set(PENDING, kept).set("authjs.csrf-token", jar.get("authjs.csrf-token")!);
        return submitCode(copy, String(100000 + i));
      }),
    );
    expect(burst.every((r) => isRefusal(r) || errorOf(r) === "RateLimited")).toBe(true);
    expect(burst.filter((r) => errorOf(r) === "RateLimited").length).toBeGreaterThanOrEqual(5);
    expect(await testDb().authEvent.count({ where: { type: "two-factor-failed", userId } })).toBeLessThanOrEqual(5);
    expect(await submitCode(jar, codeAt(secret))).toHaveErrorRedirect("RateLimited");
  });

  it("twenty wrong codes in an hour, over several pending sign-ins, end the account's budget; other accounts are untouched", async () => {
    await createUser("bea@example.com", "Bea");
    const ada = await enrolled();
    const bea = await enrolled("bea@example.com");
    for (let round = 0; round < 4; round++) {
      const jar = new CookieJar();
      await firstFactor(jar);
      for (let i = 0; i < 5; i++) await submitCode(jar, "999999");
    }
    const jar = new CookieJar();
    await firstFactor(jar);
    const res = await submitCode(jar, codeAt(ada.secret));
    expect(res).toHaveErrorRedirect("RateLimited");
    expect(res).not.toHaveSessionCookie();
    // Bea, from the same client address (a family sharing it), is not refused.
    const family = new CookieJar();
    await firstFactor(family, "bea@example.com");
    expect(await submitCode(family, codeAt(bea.secret))).toHaveSessionCookie();
    // An hour later Ada's budget is back.
    advance(3601);
    const later = new CookieJar();
    await firstFactor(later);
    expect(await submitCode(later, codeAt(ada.secret))).toHaveSessionCookie();
  });

  it("an expired pending sign-in (over 300 s) goes back to sign-in with a clear error and its cookie cleared", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    advance(301);
    const page = await twoFactorPage(jar);
    expect(page).toHaveErrorRedirect("TwoFactorExpired");
    const again = new CookieJar();
    await firstFactor(again);
    advance(301);
    const res = await submitCode(again, codeAt(secret));
    expect(res).toHaveErrorRedirect("TwoFactorExpired");
    expect(res).not.toHaveSessionCookie();
    expect(again.get(PENDING)).toBeUndefined();
  });

  it("a missing or tampered pending cookie is the same clear error, never a 5xx", async () => {
    const { secret } = await enrolled();
    expect(await twoFactorPage(new CookieJar())).toHaveErrorRedirect("TwoFactorExpired");
    expect(await submitCode(new CookieJar(), codeAt(secret))).toHaveErrorRedirect("TwoFactorExpired");
    const jar = new CookieJar();
    await firstFactor(jar);
    const sealed = jar.get(PENDING)!;
    for (const forged of [sealed.slice(0, -4) + "AAAA", "x", "%E0%A4%A", "a.b.c.d.e", sealed + sealed]) {
      jar.set(PENDING, forged);
      const res = await submitCode(jar, codeAt(secret));
      expect(res.status).toBeLessThan(500);
      expect(res).toHaveErrorRedirect("TwoFactorExpired");
    }
  });

  it("a POST without its CSRF token changes nothing: the pending sign-in and its budget stay", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    for (let i = 0; i < 6; i++) {
      const res = await submitCode(jar, "000000", { csrf: false });
      expect(res).toHaveErrorRedirect("MissingCSRF");
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    expect(await testDb().authEvent.count({ where: { type: "two-factor-failed" } })).toBe(0);
    // Nor does a right code without its token sign in or use the code up.
    const code = codeAt(secret);
    expect(await submitCode(jar, code, { csrf: false })).not.toHaveSessionCookie();
    expect(await submitCode(jar, code)).toHaveSessionCookie();
  });

  it("JSON-mode clients get {url} of the page, then {url} of the callback URL", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    const first = await firstFactor(jar, "ada@example.com", { json: "true", callbackUrl: "/account" });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ url: `${ORIGIN}/auth/two-factor` });
    expect(jar.get(PENDING)).toBeTruthy();
    const v5 = new CookieJar();
    const viaHeader = await firstFactor(v5, "ada@example.com", {}, { "X-Auth-Return-Redirect": "1" });
    expect(await viaHeader.json()).toEqual({ url: `${ORIGIN}/auth/two-factor` });
    const wrong = await submitCode(jar, "000000", { json: true });
    expect(wrong.status).toBe(200);
    expect(((await wrong.json()) as { url: string }).url).toBe(`${ORIGIN}/auth/two-factor?error=TwoFactorRequired`);
    const done = await submitCode(jar, codeAt(secret), { json: true });
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({ url: `${ORIGIN}/account` });
    expect(done).toHaveSessionCookie();
  });

  it("two tabs: a second first-factor sign-in replaces the pending one, and one code finishes it", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar, "ada@example.com", { callbackUrl: "/first-tab" });
    const firstPending = jar.get(PENDING);
    await firstFactor(jar, "ada@example.com", { callbackUrl: "/second-tab" });
    expect(jar.get(PENDING)).not.toBe(firstPending);
    expect(await submitCode(jar, codeAt(secret))).toHaveRedirect(`${ORIGIN}/second-tab`);
  });

  it("the owner signs in again and again, a fresh code each time, and is never refused", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    for (let i = 0; i < 12; i++) {
      jar.delete(SESSION);
      await firstFactor(jar);
      // A typo now and then costs a try of that pending sign-in only.
      if (i % 3 === 0) expect(isRefusal(await submitCode(jar, "111111"))).toBe(true);
      expect(await submitCode(jar, codeAt(secret))).toHaveSessionCookie();
      advance(30);
    }
  });

  // 25: more than the account's code budget (20 an hour) and every credentials budget a sign-in
  // could wrongly spend; each is an Argon2 check. docs/decisions/088-test-suite-time.md
  it("a user without TOTP never sees the page: 25 sign-ins in a row, each signed in at once", async () => {
    const jar = new CookieJar();
    for (let i = 0; i < 25; i++) {
      jar.delete(SESSION);
      const res = await firstFactor(jar, "ada@example.com", { callbackUrl: "/account" });
      expect(res).toHaveRedirect(`${ORIGIN}/account`);
      expect(res).toHaveSessionCookie();
      expect(res.headers.getSetCookie().some((c) => c.startsWith(PENDING))).toBe(false);
    }
    const claims = await decodeJwt({ token: decodeURIComponent(jar.get(SESSION)!), secrets: getConfig().secrets, salt: SESSION });
    expect(claims.amr).toEqual(["pwd"]);
  });

  it("a passkey sign-in (provider type webauthn) is exempt: the session starts at once, recorded as multi-factor", async () => {
    const { userId } = await enrolled();
    const user = await testDb().user.findUniqueOrThrow({ where: { id: userId } });
    const ar = authRequest(new Request(`${ORIGIN}/auth/callback/passkey`, { method: "POST" }));
    const ctx = {
      ar,
      body: {},
      json: false,
      providerType: "webauthn" as const,
      callbackUrl: `${ORIGIN}/account`,
      setCookies: [],
      strategyRequest: ar.request,
      authenticate: async () => ({ user: toSessionUser(user), isNewUser: false }),
    };
    const res = await completeSignIn(ctx, "passkey", { user: toSessionUser(user), isNewUser: false });
    expect(res).toHaveRedirect(`${ORIGIN}/account`);
    expect(res).toHaveSessionCookie();
    expect(res.headers.getSetCookie().some((c) => c.startsWith(PENDING))).toBe(false);
    const row = await testDb().session.findFirstOrThrow({ where: { userId, method: "passkey" } });
    expect(row.factors).toBe("hwk mfa");
    // The same call as a password sign-in is gated.
    const gated = await completeSignIn({ ...ctx, providerType: "credentials" }, "credentials", { user: toSessionUser(user), isNewUser: false });
    expect(gated).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
  });
});
