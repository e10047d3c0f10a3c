// Someone who has Ada's password spends the account's hourly budget of wrong second-factor codes.
// The owner must still get in with a right code from the browser she signed
// in with before (its device cookie: a budget of its own), and her right code resets the account's
// budget; the attacker's guesses stay bounded — without that browser's cookie only the account's
// budget, with a copy of it only that device's.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { advance, codeAt, enrolled, errorOf, firstFactor, SESSION, submitCode, useStepClock } from "./helpers.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Four pending sign-ins of five wrong codes each, from fresh browsers: the account's twenty. */
async function attackerSpendsTheAccountBudget() {
  for (let round = 0; round < 4; round++) {
    const jar = new CookieJar();
    await firstFactor(jar);
    for (let i = 0; i < 5; i++) await submitCode(jar, "999999");
  }
  const jar = new CookieJar();
  await firstFactor(jar);
  expect(await submitCode(jar, "999999")).toHaveErrorRedirect("RateLimited");
}

/** The JSON client's answer: the {url} it is sent to. */
async function urlOf(res: Response): Promise<URL> {
  return new URL(((await res.json()) as { url: string }).url);
}

describe(`the owner after an attacker's wrong codes (${dbLabel})`, () => {
  it("the owner, in the browser she signed in with before, gets in with a right code after an attacker spent the account's twenty tries (form post)", async () => {
    const owner = await enrolled();
    await attackerSpendsTheAccountBudget();
    owner.jar.delete(SESSION);
    await firstFactor(owner.jar);
    expect(await submitCode(owner.jar, codeAt(owner.secret))).toHaveSessionCookie();
  });

  it("the owner gets in the same way with the JSON client", async () => {
    const owner = await enrolled();
    await attackerSpendsTheAccountBudget();
    owner.jar.delete(SESSION);
    await firstFactor(owner.jar);
    const res = await submitCode(owner.jar, codeAt(owner.secret), { json: true });
    expect(res).toHaveSessionCookie();
    expect((await urlOf(res)).searchParams.get("error")).toBeNull();
  });

  it("the owner's right code resets the account's budget: her new browser gets in, and the attacker starts again from twenty, not beyond", async () => {
    const owner = await enrolled();
    await attackerSpendsTheAccountBudget();
    owner.jar.delete(SESSION);
    await firstFactor(owner.jar);
    expect(await submitCode(owner.jar, codeAt(owner.secret))).toHaveSessionCookie();
    advance(30);
    // A browser she never used (no device cookie) is no longer refused.
    const phone = new CookieJar();
    await firstFactor(phone);
    expect(await submitCode(phone, codeAt(owner.secret))).toHaveSessionCookie();
    advance(30);
    // The attacker: a wrong code is again a wrong code (400), and twenty more spend the budget.
    await attackerSpendsTheAccountBudget();
  });

  it("an attacker who also copied the owner's device cookie has only that device's ten tries, then is refused even with a right code", async () => {
    const owner = await enrolled();
    const device = owner.jar.get("authjs.device")!;
    expect(device).toBeTruthy();
    let refused: Response | null = null;
    for (let round = 0; round < 3 && !refused; round++) {
      const jar = new CookieJar({ "authjs.device": device });
      await firstFactor(jar);
      for (let i = 0; i < 5; i++) {
        const res = await submitCode(jar, "999999");
        if (errorOf(res) === "RateLimited" && i < 4) {
          refused = res;
          break;
        }
      }
    }
    // Ten wrong codes at most from that device in its window, then refused before the fifth of a pending sign-in.
    expect(refused).not.toBeNull();
    const next = new CookieJar({ "authjs.device": device });
    await firstFactor(next);
    expect(await submitCode(next, codeAt(owner.secret))).toHaveErrorRedirect("RateLimited");
  });
});
