// A visitor typing wrong passwords is warned before the pause (ADR 160): the last two refusals say
// how many tries are left, the one that starts the pause says so with its wait, and the pause
// itself names the ways in that need no password. The numbers come from counters kept for every
// address typed, so an unknown address reads exactly the same words.
import { describe, expect, it } from "vitest";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as signinRoute from "../../../app/routes/auth/signin";
import { DEFAULT_LIMITS } from "../../../app/auth/core/limits.server";
import { runWithLocale, t } from "../../../app/i18n/t.server";
import { createUser } from "../../support/auth";
import { dbLabel } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http";
import { useSmtpSink } from "../email/helpers";

useSmtpSink();

/** One credentials POST from `client` (the TCP peer's address), in a fresh browser. */
async function attempt(email: string, password: string, client: string): Promise<Response> {
  const jar = new CookieJar();
  const csrfToken = await fetchCsrf(jar);
  return callRoute(
    callbackRoute.action,
    post("/auth/callback/credentials", { csrfToken, email, password }, { jar, headers: { "X-Vestibule-Remote-Addr": client } }),
    { provider: "credentials" },
  );
}

const query = (res: Response) => new URL(res.headers.get("Location")!).searchParams;

/** The sign-in page's error text where `res` sends the browser. */
async function shownError(res: Response, locale: "en" | "de" | "fr" | "ar" = "en"): Promise<string> {
  const location = new URL(res.headers.get("Location")!);
  const page = await runWithLocale(locale, () => callRoute(signinRoute.loader, get(location.pathname + location.search)));
  return ((await page.json()) as { error: { message: string } }).error.message;
}

/** Wrong passwords for `email` from `client` until the pause: every answer's query, in order. */
async function untilPaused(email: string, client: string): Promise<Response[]> {
  const answers: Response[] = [];
  for (let i = 0; i <= DEFAULT_LIMITS.CREDENTIALS_ACCOUNT_CLIENT.count; i++) answers.push(await attempt(email, `wrong guess ${i}`, client));
  return answers;
}

describe(`tries left before the password pause (${dbLabel})`, () => {
  it("the last two wrong passwords say how many tries are left, the fifth that the pause began and for how long, the sixth names the other ways in — the same for an unknown address", async () => {
    await createUser();
    const known = await untilPaused("ada@example.com", "192.0.2.10");
    const unknown = await untilPaused("nobody@example.com", "192.0.2.11");
    const tries = (answers: Response[]) => answers.map((r) => `${query(r).get("error")}:${query(r).get("tries")}`);
    expect(tries(known)).toEqual(["CredentialsSignin:null", "CredentialsSignin:null", "CredentialsSignin:2", "CredentialsSignin:1", "CredentialsSignin:0", "RateLimited:null"]);
    expect(tries(unknown)).toEqual(tries(known));
    for (let i = 0; i < known.length; i++) expect(await shownError(known[i]!)).toBe(await shownError(unknown[i]!));

    expect(await shownError(known[1]!)).toBe(t("error.CredentialsSignin"));
    expect(await shownError(known[2]!)).toBe(`${t("error.CredentialsSignin")} You have 2 more tries before sign-in with a password is paused for a while.`);
    expect(await shownError(known[3]!)).toMatch(/You have 1 more try before/);
    expect(await shownError(known[4]!)).toMatch(/That was the last try for now: sign-in with a password is paused\. Try again in 15 minutes\. You can still sign in with an e-mail we send you, or reset your password\.$/);
    expect(await shownError(known[5]!)).toMatch(/^Too many attempts\. Try again in 15 minutes\. You can still sign in with an e-mail we send you, or reset your password\.$/);
    for (const locale of ["de", "fr", "ar"] as const) {
      expect(await shownError(known[3]!, locale)).toBe(runWithLocale(locale, () => `${t("error.CredentialsSignin")} ${t("limit.passwordTriesLeft", { tries: 1 })}`));
      expect(await shownError(known[5]!, locale)).toBe(runWithLocale(locale, () => `${t("error.RateLimited", { minutes: 15 })} ${t("limit.passwordOtherWays")}`));
    }
  });
});
