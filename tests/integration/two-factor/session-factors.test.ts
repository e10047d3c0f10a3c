// /account's session list  shows what each sign-in proved: a session that passed the
// second factor says so, one from before it was turned on (or a sign-in without it) does not.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createUser, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { accountPage, codeAt, enrolled, firstFactor, submitCode, useStepClock } from "./helpers.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

type Listed = { current: boolean; factors: string[] };

async function listed(jar: CookieJar) {
  return ((await accountPage(jar)) as unknown as { sessions: Listed[] }).sessions;
}

for (const strategy of ["jwt", "database"] as const) {
  describe(`the factors on /account's session list (${strategy} sessions, ${dbLabel})`, () => {
    it("the session that passed the code lists password + authenticator code; the older password-only one lists the password", async () => {
      const restore = withEnv({ AUTH_SESSION_STRATEGY: strategy });
      try {
        const { jar: before, recoveryCodes, secret } = await enrolled();
        const jar = new CookieJar();
        await firstFactor(jar);
        await submitCode(jar, codeAt(secret));
        const sessions = await listed(jar);
        expect(sessions.find((s) => s.current)?.factors).toEqual(["pwd", "otp", "mfa"]);
        expect(sessions.find((s) => !s.current)?.factors).toEqual(["pwd"]);

        const third = new CookieJar();
        await firstFactor(third);
        await submitCode(third, recoveryCodes[0]!);
        expect((await listed(third)).find((s) => s.current)?.factors).toEqual(["pwd", "rcv", "mfa"]);
        expect((await listed(before)).length).toBe(3);
      } finally {
        restore();
      }
    });
  });
}
