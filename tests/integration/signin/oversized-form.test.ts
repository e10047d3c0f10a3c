// A visitor whose password form post is over the body limit (64 KiB) — a pasted
// document in the password field, an extension stuffing the form — through the whole app
// (React Router's pipeline, as the server runs it): a page in her language, 413, with the way back
// to the sign-in form; a JSON client gets JSON. Nothing is signed in and no attempt is counted.
import { beforeAll, describe, expect, it } from "vitest";
import { runWithLocale, t } from "../../../app/i18n/t.server";
import { appHandler } from "../../support/app-handler";
import { resetDatabase, testDb } from "../../support/db";
import { ORIGIN } from "../../support/http";

let handle: (request: Request) => Promise<Response>;
beforeAll(async () => {
  handle = await appHandler();
  await resetDatabase();
});

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

function oversized(path: string, headers: Record<string, string>): Request {
  const body = new URLSearchParams({ csrfToken: "x", email: "ada@example.com", password: "p".repeat(70 * 1024) });
  return new Request(`${ORIGIN}${path}`, {
    method: "POST",
    body,
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN, ...headers },
  });
}

const unescape = (html: string) => html.replace(/&#x27;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, "&");

describe("a form post over the body limit on /auth/callback/credentials", () => {
  for (const locale of ["en", "de", "fr", "ar"] as const) {
    it(`a visitor (${locale}) who pasted 70 KiB into the password field gets a 413 page in her language with the way back to the sign-in form`, async () => {
      const res = await handle(oversized("/auth/callback/credentials", { Accept: BROWSER_ACCEPT, "Accept-Language": locale }));
      expect(res.status).toBe(413);
      expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
      const html = unescape(await res.text());
      expect(html).toContain(`<html lang="${locale}" dir="${locale === "ar" ? "rtl" : "ltr"}"`);
      const [heading, message, back] = runWithLocale(locale, () => [t("boundary.tooLarge.heading"), t("boundary.tooLarge.message"), t("boundary.backToForm")]);
      expect(html).toMatch(new RegExp(`<h1[^>]*>${heading}</h1>`));
      expect(html).toContain(message);
      expect(html).toMatch(new RegExp(`<a[^>]*href="/auth/signin"[^>]*>${back}</a>`));
      expect(html).not.toContain("Request body too large");
    });
  }

  it("a JSON client gets the protocol's JSON 413, with X-Auth-Return-Redirect or asking for JSON", async () => {
    const clients: Record<string, string>[] = [{ "X-Auth-Return-Redirect": "1", Accept: BROWSER_ACCEPT }, { Accept: "application/json" }];
    for (const headers of clients) {
      const res = await handle(oversized("/auth/callback/credentials", headers));
      expect(res.status).toBe(413);
      expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
      expect(await res.json()).toBe("Request body too large.");
    }
    expect(await testDb().session.count()).toBe(0);
  });

  it("/auth/callback/email refuses the same way: the page, not 'server error'", async () => {
    const res = await handle(oversized("/auth/callback/email", { Accept: BROWSER_ACCEPT, "Accept-Language": "de" }));
    expect(res.status).toBe(413);
    const html = unescape(await res.text());
    expect(html).toContain(runWithLocale("de", () => t("boundary.tooLarge.heading")));
    expect(html).toContain('href="/auth/signin"');
  });
});
