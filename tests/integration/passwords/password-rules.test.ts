// Password rules through /account (ADR 075): 15 characters for a password that is
// the only factor, 8 while the TOTP second factor is on; the site's name and the user's name are
// refused inside a password, each with its own message.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createUser, PASSWORD } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { signIn } from "../../support/auth.ts";
import { accountIntent, enrolled, useStepClock } from "../two-factor/helpers.ts";
import { accountRefusal } from "../../support/account-refusal.ts";

beforeEach(async () => {
  await resetDatabase();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

// A refused new password sends a browser back to the page, which shows it (tests/support/account-refusal.ts).
const fieldError = async (res: Response, jar: CookieJar) => (await accountRefusal(res, jar)).fieldErrors.password;

describe(`choosing a password on /account (${dbLabel})`, () => {
  it("without a second factor, a 12-character password is refused as too short (15 needed)", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar());
    const res = await accountIntent(jar, { intent: "password-change", currentPassword: PASSWORD, password: "amber kettle" });
    expect(res.status).toBe(303);
    expect(await fieldError(res, jar)).toBe("Use at least 15 characters.");
  });

  it("with TOTP on, the same 12-character password is accepted; 7 characters are still too short", async () => {
    await createUser();
    const { jar } = await enrolled();
    const short = await accountIntent(jar, { intent: "password-change", currentPassword: PASSWORD, password: "amber k" });
    expect(await fieldError(short, jar)).toBe("Use at least 8 characters.");
    const res = await accountIntent(jar, { intent: "password-change", currentPassword: PASSWORD, password: "amber kettle" });
    expect(res.status).toBe(302);
  });

  it("the site's name and the user's name are refused inside a new password, each with its own message", async () => {
    await createUser("grace@example.com", "Grace Hopper");
    const { jar } = await signIn(new CookieJar(), "grace@example.com");
    const site = await accountIntent(jar, { intent: "password-change", currentPassword: PASSWORD, password: "my Vestibule passphrase" });
    expect(await fieldError(site, jar)).toBe("Do not use the name of this site or its address in your password.");
    const name = await accountIntent(jar, { intent: "password-change", currentPassword: PASSWORD, password: "admiral HOPPER sails on" });
    expect(await fieldError(name, jar)).toBe("Do not use your name in your password.");
  });
});
