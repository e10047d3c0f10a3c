// What a visitor with a second factor reads about codes, in en/fr/de/ar. A code from the
// authenticator app typed a second time (the same 30 seconds, or an older one) is refused as
// before, but called already used (wait for the next one), not wrong. Wherever a code is asked or
// the step was ended by too many wrong ones, the words say a recovery code may be typed instead.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import { createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { accountRefusal } from "../../support/account-refusal.ts";
import { LOCALES } from "../../support/render-page.tsx";
import * as signin from "../../../app/routes/auth/signin.tsx";
import { callRoute, get } from "../../support/http.ts";
import { accountIntent, codeAt, enrolled, firstFactor, refusalText, submitCode, twoFactorPage, useStepClock } from "./helpers.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

describe(`a used authenticator code (${dbLabel})`, () => {
  it("on /account, replacing the recovery codes twice with the same code: the second is refused as already used, in every language; a wrong code is still 'did not work'", async () => {
    const { jar, secret } = await enrolled();
    const code = codeAt(secret);
    expect((await accountIntent(jar, { intent: "recovery-codes", code })).status).toBe(200);
    for (const locale of LOCALES) {
      const res = await runWithLocale(locale, () => accountIntent(jar, { intent: "recovery-codes", code }));
      expect(res.status).toBe(303);
      const body = await runWithLocale(locale, () => accountRefusal(res, jar));
      expect(body.fieldErrors.code).toBe(runWithLocale(locale, () => t("twoFactor.codeUsed")));
    }
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    const res = await accountIntent(jar, { intent: "recovery-codes", code: wrong });
    expect((await accountRefusal(res, jar)).fieldErrors.code).toBe(runWithLocale("en", () => t("twoFactor.wrongCode")));
  });

  it("at the sign-in's second step, a code already used for this account says so, with the tries left, in every language", async () => {
    const { secret } = await enrolled();
    const code = codeAt(secret);
    const first = new CookieJar();
    await firstFactor(first);
    expect(await submitCode(first, code)).toHaveSessionCookie();
    for (const locale of LOCALES) {
      const jar = new CookieJar();
      await runWithLocale(locale, () => firstFactor(jar));
      const res = await runWithLocale(locale, () => submitCode(jar, code));
      const error = await runWithLocale(locale, () => refusalText(jar, res));
      expect(error).toMatch(new RegExp(`^${escape(runWithLocale(locale, () => t("twoFactor.codeUsed")).slice(0, 20))}`));
      expect((await twoFactorPage(jar)).status).toBe(200);
    }
  });
});

describe(`recovery codes named where a code is asked (${dbLabel})`, () => {
  it("the second step ended by wrong codes: the sign-in page gives the wait and says a recovery code may be typed next time, in every language", async () => {
    await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    let res: Response | null = null;
    for (let i = 0; i < 5; i++) res = await submitCode(jar, "000000");
    const location = new URL(res!.headers.get("Location")!);
    expect(location.searchParams.get("error")).toBe("RateLimited");
    for (const locale of LOCALES) {
      const page = (await (await runWithLocale(locale, () => callRoute(signin.loader, get(location.pathname + location.search)))).json()) as { error: { message: string } };
      const minutes = Number(location.searchParams.get("minutes"));
      expect(page.error.message).toBe(runWithLocale(locale, () => `${t("error.RateLimited", { minutes })} ${t("limit.recoveryHint")}`));
    }
  });

  it("a wrong code at the second step says to check the app or type a recovery code", async () => {
    await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    for (const [i, locale] of LOCALES.entries()) {
      const res = await runWithLocale(locale, () => submitCode(jar, "000000"));
      const error = await runWithLocale(locale, () => refusalText(jar, res));
      expect(error).toBe(runWithLocale(locale, () => t("twoFactor.refused", { triesLeft: 4 - i })));
      if (locale === "en") expect(error).toMatch(/or type one of your recovery codes \(4 tries left\)/);
    }
  });
});

function escape(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
