// Sign-out (contract §3) ends a pending sign-in too: a first factor waiting for its code must not
// outlive a sign-out on a browser someone else uses next.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as signout from "../../../app/routes/auth/signout.tsx";
import { createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { callRoute, fetchCsrf, post } from "../../support/http.ts";
import { enrol, firstFactor, PENDING, useStepClock } from "./helpers.ts";

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
    const { jar } = await enrol();
    await firstFactor(jar);
    expect(jar.get(PENDING)).toBeTruthy();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(signout.action, post("/auth/signout", { csrfToken }, { jar }));
    expect(cleared(res, PENDING)).toBe(true);
    jar.apply(res);
    expect(jar.get(PENDING)).toBeFalsy();
  });

  it("signing out with no pending sign-in sets no extra cookie for it", async () => {
    const { jar } = await enrol();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(signout.action, post("/auth/signout", { csrfToken }, { jar }));
    expect(res.headers.getSetCookie().some((c) => c.startsWith(`${PENDING}=`))).toBe(false);
  });
});

