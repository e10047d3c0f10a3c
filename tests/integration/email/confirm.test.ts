// AUTH_EMAIL_CONFIRM=true: opening the link only shows "Sign in as <address>"; the button POSTs
// it back. Any number of GETs (mail scanners, link previews) leave the link usable.
import { describe, expect, it } from "vitest";
import * as callbackEmail from "../../../app/routes/auth/callback-email.tsx";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { confirmLink, configure, openLink, ORIGIN, requestLink, sessionOf, useSmtpSink } from "./helpers.ts";

const smtp = useSmtpSink({ AUTH_EMAIL_CONFIRM: "true" });

type ConfirmPage = { address: string; token: string; callbackUrl: string; csrfToken: string; action: string };

async function linkFor(email: string, callbackUrl = "/account") {
  const before = smtp.sink.messages.length;
  await requestLink(new CookieJar(), { email, callbackUrl });
  const messages = await smtp.sink.waitFor(before + 1);
  return linkIn(messages.at(-1)!);
}

describe(`confirm mode (${dbLabel})`, () => {
  it("GET shows the confirmation page and uses nothing up, however often it is fetched", async () => {
    const link = await linkFor("Reader@Example.com");
    for (let i = 0; i < 5; i++) {
      // A scanner: no cookies, follows the link.
      const res = await openLink(link);
      expect(res.status).toBe(200);
      expect(res).not.toHaveSessionCookie();
      const page = (await res.json()) as ConfirmPage;
      expect(page).toMatchObject({ address: "reader@example.com", token: link.searchParams.get("token"), callbackUrl: "/account", action: "/auth/callback/email" });
      expect(page.csrfToken).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(await testDb().verificationToken.count()).toBe(1);
    expect(await testDb().user.count()).toBe(0);
  });

  it("the button's POST signs in (new user → /welcome) and the link is then used up", async () => {
    const link = await linkFor("reader@example.com");
    const device = new CookieJar();
    const page = (await (await openLink(link, device)).json()) as ConfirmPage;
    const res = await confirmLink(device, { csrfToken: page.csrfToken, token: page.token, email: page.address, callbackUrl: page.callbackUrl });
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(res).toHaveSessionCookie();
    expect((await sessionOf(device))?.user.email).toBe("reader@example.com");
    expect(await testDb().verificationToken.count()).toBe(0);

    // Opening or posting it again: Verification.
    expect(await openLink(link)).toHaveErrorRedirect("Verification");
    const again = await confirmLink(device, { csrfToken: page.csrfToken, token: page.token, email: page.address });
    expect(again).toHaveErrorRedirect("Verification");
  });

  it("a POST without the page's CSRF token (say, a cross-site form) is refused and the link survives", async () => {
    const link = await linkFor("reader@example.com");
    const stranger = new CookieJar();
    const res = await confirmLink(stranger, { token: link.searchParams.get("token")!, email: "reader@example.com" });
    expect(res).toHaveErrorRedirect("MissingCSRF");
    expect(res).not.toHaveSessionCookie();
    expect(await testDb().verificationToken.count()).toBe(1);

    const device = new CookieJar();
    const page = (await (await openLink(link, device)).json()) as ConfirmPage;
    expect(await confirmLink(device, { csrfToken: page.csrfToken, token: page.token, email: page.address })).toHaveSessionCookie();
  });

  it("an expired, used or altered link says so on GET instead of showing the button", async () => {
    const link = await linkFor("reader@example.com");
    const altered = new URL(link);
    altered.searchParams.set("email", "someone.else@example.com");
    expect(await openLink(altered)).toHaveErrorRedirect("Verification");

    await testDb().verificationToken.updateMany({ data: { expires: new Date(Date.now() - 1000) } });
    expect(await openLink(link)).toHaveErrorRedirect("Verification");
  });

  it("the page is never cached and keeps the root's headers (Referrer-Policy: same-origin)", () => {
    const parentHeaders = new Headers({ "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin" });
    const headers = new Headers(callbackEmail.headers({ parentHeaders } as never));
    expect(headers.get("Cache-Control")).toBe("private, no-store");
    expect(headers.get("Referrer-Policy")).toBe("same-origin");
    expect(headers.get("X-Frame-Options")).toBe("DENY");
  });

  it("without AUTH_EMAIL_CONFIRM, a GET signs in at once (the Auth.js behaviour)", async () => {
    const link = await linkFor("reader@example.com");
    configure({ AUTH_EMAIL_CONFIRM: "false" });
    const res = await openLink(link);
    expect(res.status).toBe(302);
    expect(res).toHaveSessionCookie();
  });
});
