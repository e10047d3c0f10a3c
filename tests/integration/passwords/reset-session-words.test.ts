// A session begun by a password reset is named by what proved it — the e-mailed link or code — on
// /account's list of devices and in /admin's, never "Signed in with a password", in en/fr/de/ar.
// A session begun with the password itself keeps its words.
import { describe, expect, it } from "vitest";
import * as account from "../../../app/routes/account.tsx";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { LOCALES, renderPage, textOf } from "../../support/render-page.tsx";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import { useSmtpSink } from "../email/helpers.ts";
import { askReset, codeIn, postReset } from "./helpers.ts";

const smtp = useSmtpSink();
const NEW = "velvet lantern orbit";

type Session = { current: boolean; method: string | null; methodType: string | null };

async function accountData(jar: CookieJar) {
  const res = await callRoute(account.loader, get("/account", { jar }));
  jar.apply(res);
  return (await res.json()) as { sessions: Session[] };
}

async function resetBy(how: "code" | "link") {
  await mailSenderIdle();
  const before = smtp.sink.messages.length;
  const jar = new CookieJar();
  await askReset(jar, "ada@example.com");
  const message = (await smtp.sink.waitFor(before + 1)).at(-1)!;
  const fields: Record<string, string> = how === "code" ? { code: codeIn(message), password: NEW } : { token: linkIn(message).searchParams.get("token")!, email: "ada@example.com", password: NEW };
  const browser = how === "code" ? jar : new CookieJar();
  expect((await postReset(browser, fields)).headers.get("Location")).toMatch(/\/account\?updated=password-reset$/);
  return browser;
}

describe(`a session begun by a password reset (${dbLabel})`, () => {
  for (const how of ["code", "link"] as const) {
    it(`by the e-mailed ${how}: /account lists it as signed in by resetting the password by e-mail, in every language`, async () => {
      await createUser();
      const jar = await resetBy(how);
      const page = await accountData(jar);
      const current = page.sessions.find((s) => s.current)!;
      expect(current.methodType).toBe("reset");
      for (const locale of LOCALES) {
        const text = textOf(renderPage(account, "/account", locale, { loaderData: page }));
        expect(text).toContain(runWithLocale(locale, () => t("via.reset")));
        expect(text).not.toContain(runWithLocale(locale, () => t("via.credentials")));
      }
    });
  }

  it("a password sign-in is still 'Signed in with a password'", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar());
    const page = await accountData(jar);
    expect(page.sessions.find((s) => s.current)!.methodType).toBe("credentials");
    expect(textOf(renderPage(account, "/account", "en", { loaderData: page }))).toContain(t("via.credentials"));
  });
});
