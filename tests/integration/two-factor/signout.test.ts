// A first factor waiting for its code must not outlive the next person's use of a shared browser:
// sign-out  ends the pending sign-in, and so does someone else's sign-in that needs
// no code (one that needs a code replaces it, ADR 043).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as signout from "../../../app/routes/auth/signout.tsx";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, post } from "../../support/http.ts";
import { codeAt, enrolled, firstFactor, PENDING, submitCode, useStepClock } from "./helpers.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

const cleared = (res: Response, name: string) =>
  res.headers.getSetCookie().some((c) => c.startsWith(`${name}=`) && /max-age=0|expires=thu, 01 jan 1970/i.test(c));

describe(`sign-out ends a pending sign-in (${dbLabel})`, () => {
  it("a family's shared browser: signing out clears the pending authjs.two-factor cookie left by a first factor", async () => {
    const { jar } = await enrolled();
    await firstFactor(jar);
    expect(jar.get(PENDING)).toBeTruthy();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(signout.action, post("/auth/signout", { csrfToken }, { jar }));
    expect(cleared(res, PENDING)).toBe(true);
    jar.apply(res);
    expect(jar.get(PENDING)).toBeFalsy();
  });

  it("signing out with no pending sign-in sets no extra cookie for it", async () => {
    const { jar } = await enrolled();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(signout.action, post("/auth/signout", { csrfToken }, { jar }));
    expect(res.headers.getSetCookie().some((c) => c.startsWith(`${PENDING}=`))).toBe(false);
  });

  it("a family member signing in without a second factor on the same browser ends the other's pending sign-in", async () => {
    await enrolled();
    await createUser("ben@example.com", "Ben");
    const shared = new CookieJar();
    await firstFactor(shared);
    expect(shared.get(PENDING)).toBeTruthy();
    const { res } = await signIn(shared, "ben@example.com");
    expect(res).toHaveSessionCookie();
    expect(cleared(res, PENDING)).toBe(true);
    expect(shared.get(PENDING)).toBeFalsy();
  });

  it("the owner finishing with a code still ends up with the session and no pending cookie", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    const res = await submitCode(jar, codeAt(secret));
    expect(res).toHaveSessionCookie();
    expect(jar.get(PENDING)).toBeFalsy();
  });
});
