// A code from the authenticator app typed a second time (the same 30 seconds, or an older one) is
// refused as before, but the visitor reads that it was already used and to wait for the next one —
// not that it is wrong — on /account and on the sign-in's second step, in en/fr/de/ar.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import { createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { LOCALES } from "../../support/render-page.tsx";
import { accountIntent, codeAt, enrolled, firstFactor, submitCode, twoFactorPage, useStepClock } from "./helpers.ts";

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
      expect(res.status).toBe(400);
      const body = (await res.json()) as { fieldErrors: { code?: string } };
      expect(body.fieldErrors.code).toBe(runWithLocale(locale, () => t("twoFactor.codeUsed")));
    }
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    const res = await accountIntent(jar, { intent: "recovery-codes", code: wrong });
    expect(((await res.json()) as { fieldErrors: { code?: string } }).fieldErrors.code).toBe(runWithLocale("en", () => t("twoFactor.wrongCode")));
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
      expect(res.status).toBe(400);
      const page = (await res.json()) as { error: string };
      expect(page.error).toMatch(new RegExp(`^${escape(runWithLocale(locale, () => t("twoFactor.codeUsed")).slice(0, 20))}`));
      expect((await twoFactorPage(jar)).status).toBe(200);
    }
  });
});

function escape(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
