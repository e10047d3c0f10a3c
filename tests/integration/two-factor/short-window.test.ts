// The pending sign-in's budget window is configurable (AUTH_RATE_LIMIT_TWO_FACTOR_PENDING); a
// finished pending sign-in must stay finished for as long as its cookie can live (300 s), even
// when an operator sets that window shorter.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createUser, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { advance, codeAt, enrolled, firstFactor, PENDING, submitCode, useStepClock } from "./helpers.ts";

let restore: () => void;
beforeEach(async () => {
  restore = withEnv({ AUTH_RATE_LIMIT_TWO_FACTOR_PENDING: "5/60" });
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
  restore();
});

describe(`a finished pending sign-in with a 60-second budget window (${dbLabel})`, () => {
  it("replayed 90 s after its success with the next right code, it starts no second session", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    const stolen = jar.get(PENDING)!;
    expect(await submitCode(jar, codeAt(secret))).toHaveSessionCookie();
    advance(90);
    const replay = await submitCode(new CookieJar({ [PENDING]: stolen }), codeAt(secret));
    expect(replay).not.toHaveSessionCookie();
  });
});
