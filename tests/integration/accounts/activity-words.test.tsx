// What a visitor reads in the activity list of /account (and an operator on /admin): every method
// by a word of her language, never an internal provider name ("Email", "Credentials"), and the
// account's creation with the device it was created from, never "Unknown device".
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ActivitySection } from "../../../app/components/activity-section";
import { I18nProvider } from "../../../app/i18n/react";
import { directionOf, messagesOf } from "../../../app/i18n/languages.server";
import { runWithLocale, t } from "../../../app/i18n/t.server";
import * as account from "../../../app/routes/account.tsx";
import { dbLabel } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { openLink, requestLink, useSmtpSink } from "../email/helpers.ts";

const smtp = useSmtpSink();
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

type Event = { id: string; type: string; at: string; ip: string | null; userAgent: string | null; method: string | null; methodType: string | null };

function rendered(locale: "en" | "de" | "fr" | "ar", events: Event[]): string[] {
  const html = renderToString(
    <I18nProvider locale={locale} dir={directionOf(locale)} messages={messagesOf(locale)}>
      <ActivitySection events={events} />
    </I18nProvider>,
  );
  return [...html.matchAll(/<tr data-event="[^"]+">([\s\S]*?)<\/tr>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, "|").replace(/\|+/g, "|"));
}

describe(`the activity list's words (${dbLabel})`, () => {
  it("a visitor who created her account with an e-mail link from Firefox reads 'Account created (e-mail link or code)' with her device, in en/de/fr/ar — never '(Email)' or 'Unknown device'", async () => {
    await requestLink(new CookieJar(), { email: "new@example.com" }, { headers: { "User-Agent": FIREFOX } });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    const jar = new CookieJar();
    expect(await openLink(link, jar, { "User-Agent": FIREFOX })).toHaveSessionCookie();
    const page = (await (await callRoute(account.loader, get("/account", { jar }))).json()) as { events: Event[] };
    const created = page.events.filter((e) => e.type === "user-created");
    expect(created).toHaveLength(1);
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const [row] = rendered(locale, created);
      runWithLocale(locale, () => {
        expect(row).toContain(t("activity.withMethod", { event: t("event.user-created"), method: t("method.email") }));
        expect(row).not.toContain(t("device.unknown"));
      });
      expect(row).toContain("Firefox");
      expect(row).not.toMatch(/\(Email\)|Credentials/);
    }
  });

  it("an event by password, by passkey or by a provider names the method in the visitor's language (the provider by its own name)", () => {
    const at = new Date().toISOString();
    const events: Event[] = [
      { id: "1", type: "password-reset", at, ip: null, userAgent: FIREFOX, method: "Credentials", methodType: "credentials" },
      { id: "2", type: "account-linked", at, ip: null, userAgent: FIREFOX, method: "GitHub", methodType: "oauth" },
      { id: "3", type: "reauthenticated", at, ip: null, userAgent: FIREFOX, method: "Passkey", methodType: "webauthn" },
    ];
    const rows = rendered("ar", events);
    runWithLocale("ar", () => {
      expect(rows[0]).toContain(t("method.credentials"));
      expect(rows[1]).toContain("GitHub");
      expect(rows[2]).toContain(t("method.webauthn"));
    });
    for (const row of rows) expect(row).not.toMatch(/Credentials|Passkey/);
  });

  it("a visitor who signed in with the e-mailed code is not told she used 'an e-mail link': the words cover the code, in en/de/fr/ar", () => {
    const at = new Date().toISOString();
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const [row] = rendered(locale, [{ id: "1", type: "signin", at, ip: null, userAgent: FIREFOX, method: "Email", methodType: "email" }]);
      expect(row).toContain(runWithLocale(locale, () => t("via.email")));
    }
    expect(runWithLocale("en", () => t("via.email"))).toBe("Signed in with an e-mail link or code");
  });
});
