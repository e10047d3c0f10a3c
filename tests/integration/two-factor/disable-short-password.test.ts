// Turning the second factor off while the password is shorter than the single-factor floor
// (docs/decisions/084): a password of 8 characters is allowed while TOTP is
// on, but would be the only factor once it is off, so totp-disable asks for a longer password
// first. The stored password records only which floor it met (never its length); a password
// stored before that record, or against a lower floor than today's, counts as unknown: asked.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createUser, PASSWORD, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { accountIntent, advance, codeAt, enrolled, useStepClock } from "./helpers.ts";

const SHORT = "qv7#Lm2!zp"; // 10 characters: enough beside a second factor, not alone
const LONG = "tidal marble quietly sings";

let undoEnv: (() => void) | null = null;
beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  vi.useRealTimers();
});

type Refusal = { formError: string | null; passwordFirst?: { min: number } };

async function disable(jar: Parameters<typeof accountIntent>[0], secret: string) {
  const res = await accountIntent(jar, { intent: "totp-disable", code: codeAt(secret) });
  return res;
}

describe(`totp-disable and the single-factor floor (${dbLabel})`, () => {
  it("a user who chose a short password while TOTP was on is asked for a longer one first; nothing is turned off and no code is spent", async () => {
    const { jar, secret, userId } = await enrolled();
    const changed = await accountIntent(jar, { intent: "password-change", currentPassword: PASSWORD, password: SHORT });
    expect(changed.status).toBe(302);
    expect((await testDb().password.findUniqueOrThrow({ where: { userId } })).singleFactorFloorMet).toBe(0);

    advance(30);
    const code = codeAt(secret);
    const refused = await accountIntent(jar, { intent: "totp-disable", code });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as Refusal;
    expect(body.formError).toBe(
      "Your password is shorter than 15 characters, the least allowed without a second factor. Choose a longer password below first, then turn the second factor off. Nothing was changed.",
    );
    expect(body.passwordFirst).toEqual({ min: 15 });
    expect(await testDb().twoFactorCredential.count({ where: { userId, confirmedAt: { not: null } } })).toBe(1);

    // A longer password, then the same code (never spent by the refusal) turns the factor off.
    expect((await accountIntent(jar, { intent: "password-change", currentPassword: SHORT, password: LONG })).status).toBe(302);
    expect((await testDb().password.findUniqueOrThrow({ where: { userId } })).singleFactorFloorMet).toBe(15);
    expect(await accountIntent(jar, { intent: "totp-disable", code })).toHaveRedirect("/account?updated=two-factor-off#two-factor-notice");
  });

  it("a password stored before its floor was recorded counts as unknown: asked", async () => {
    const { jar, secret, userId } = await enrolled();
    await testDb().password.update({ where: { userId }, data: { singleFactorFloorMet: null } });
    advance(30);
    expect((await disable(jar, secret)).status).toBe(400);
  });

  it("a floor raised since the password was chosen asks again; a long enough recorded password turns it off at once", async () => {
    const { jar, secret, userId } = await enrolled();
    expect((await testDb().password.findUniqueOrThrow({ where: { userId } })).singleFactorFloorMet).toBe(15);
    undoEnv = withEnv({ AUTH_PASSWORD_MIN_LENGTH: "20" });
    advance(30);
    expect((await disable(jar, secret)).status).toBe(400);
    undoEnv();
    undoEnv = null;
    advance(30);
    expect(await disable(jar, secret)).toHaveRedirect("/account?updated=two-factor-off#two-factor-notice");
  });

  it("a user without a password turns the factor off without being asked", async () => {
    const { jar, secret, userId } = await enrolled();
    await testDb().password.delete({ where: { userId } });
    advance(30);
    expect(await disable(jar, secret)).toHaveRedirect("/account?updated=two-factor-off#two-factor-notice");
  });
});
