// The "check your e-mail" page (issue 32): in the browser that asked, it names the address that was
// typed and offers to send the e-mail again — through the same form endpoint, so the same limits
// and the same page for an address with an account or without — and once the sign-in it waited
// for is done, Back to it says the visitor is signed in, never "check your e-mail" again.
// In en/fr/de/ar.
import { describe, expect, it } from "vitest";
import * as callbackEmail from "../../../app/routes/auth/callback-email.tsx";
import * as forgotPassword from "../../../app/routes/auth/forgot-password.tsx";
import * as verifyRequest from "../../../app/routes/auth/verify-request.tsx";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import { createUser } from "../../support/auth.ts";
import { dbLabel } from "../../support/db.ts";
import { callRoute, CookieJar, get, post } from "../../support/http.ts";
import { LOCALES, renderPage, textOf } from "../../support/render-page.tsx";
import { isSecurityNotice, waitForMessages } from "../../support/smtp-sink.ts";
import { configure, csrfFor, ORIGIN, requestLink, sessionOf, smtpEnv, useSmtpSink } from "./helpers.ts";
import type { ReceivedMessage } from "../../support/smtp-sink.ts";

function codeIn(message: ReceivedMessage): string {
  return /code in the browser where you asked: (\d{6})/.exec(message.text ?? "")![1]!;
}

const smtp = useSmtpSink();

type VerifyPage = {
  address: string | null;
  resend: { action: string; csrfToken: string; email: string; callbackUrl: string | null } | null;
  signedInAs: string | null;
  sentAgain: boolean;
  codeForm: unknown;
};

async function verifyPage(jar: CookieJar, type = "email") {
  const path = `/auth/verify-request?provider=email&type=${type}`;
  const res = await callRoute(verifyRequest.loader, get(path, { jar }));
  jar.apply(res);
  return { path, page: (await res.json()) as VerifyPage };
}

const sent = () => smtp.sink.messages.filter((m) => !isSecurityNotice(m)).length;

describe(`the check-your-e-mail page (${dbLabel})`, () => {
  it("names the address typed, in every language, and 'Send it again' sends another sign-in e-mail through the sign-in form's endpoint", async () => {
    const jar = new CookieJar();
    expect(await requestLink(jar, { email: "sam@example.com", callbackUrl: "/account" })).toHaveRedirect(`${ORIGIN}/auth/verify-request?provider=email&type=email`);
    await waitForMessages(smtp.sink, 1);
    const { path, page } = await verifyPage(jar);
    expect(page.address).toBe("sam@example.com");
    expect(page.resend).toMatchObject({ action: "/auth/signin/email", email: "sam@example.com", callbackUrl: "/account" });
    for (const locale of LOCALES) {
      const html = renderPage(verifyRequest, path, locale, { loaderData: page });
      // The sentence around the address, in the page's language.
      expect(textOf(html)).toContain(runWithLocale(locale, () => t("verify.sentTo", { address: "sam@example.com" })).split("<b>")[0]!.trim());
      // The address isolated left to right (ADR 161); a short one unbroken, moving whole to the next line.
      expect(html).toContain(`<bdi dir="ltr" class="ltr">sam@example.com</bdi>`);
      expect(html).toMatch(/<form id="verify-resend-form"[^>]*action="\/auth\/signin\/email"/);
      expect(textOf(html)).toContain(runWithLocale(locale, () => t("verify.resend")));
    }
    const before = sent();
    const again = await requestLink(jar, { email: page.resend!.email, callbackUrl: page.resend!.callbackUrl!, csrfToken: page.resend!.csrfToken });
    expect(again).toHaveRedirect(`${ORIGIN}/auth/verify-request?provider=email&type=email`);
    await waitForMessages(smtp.sink, before + 1);
    // The page after "Send it again" says that it went (the first one did not).
    expect(page.sentAgain).toBe(false);
    const after = await verifyPage(jar);
    expect(after.page).toMatchObject({ address: "sam@example.com", sentAgain: true });
    for (const locale of LOCALES) {
      expect(textOf(renderPage(verifyRequest, after.path, locale, { loaderData: after.page }))).toContain(runWithLocale(locale, () => t("verify.sentAgain")));
    }
  });

  it("sending again is held by the address's limit, which says so in its own words", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_RATE_LIMIT_EMAIL_ADDRESS: "1/3600" }));
    const jar = new CookieJar();
    await requestLink(jar, { email: "sam@example.com" });
    const { page } = await verifyPage(jar);
    const again = await requestLink(jar, { email: page.resend!.email, csrfToken: page.resend!.csrfToken });
    const to = new URL(again.headers.get("Location")!);
    expect(to.searchParams.get("error")).toBe("RateLimited");
    expect(to.searchParams.get("limit")).toBe("address");
  });

  it("a password reset's page reads the same for an address with an account and one without: both named, both offered again", async () => {
    await createUser();
    const pages: VerifyPage[] = [];
    for (const email of ["ada@example.com", "nobody@example.com"]) {
      const jar = new CookieJar();
      const csrfToken = await csrfFor(jar);
      const res = await callRoute(forgotPassword.action, post("/auth/forgot-password", { csrfToken, email }, { jar }));
      jar.apply(res);
      const { page } = await verifyPage(jar, "reset");
      expect(page.address).toBe(email);
      expect(page.resend).toMatchObject({ action: "/auth/forgot-password", email, callbackUrl: null });
      pages.push(page);
    }
    expect(Object.keys(pages[0]!).sort()).toEqual(Object.keys(pages[1]!).sort());
    // Ada's e-mail is sent after the answer: it is in before the next test starts.
    expect((await waitForMessages(smtp.sink, 1)).map((m) => m.envelope.to[0])).toEqual(["ada@example.com"]);
  });

  it("Back to it after the code signed the visitor in: 'You are signed in', no code form, no 'check your e-mail', in every language", async () => {
    await createUser("sam@example.com", "Sam");
    const jar = new CookieJar();
    await requestLink(jar, { email: "sam@example.com", callbackUrl: "/account" });
    const [message] = await waitForMessages(smtp.sink, 1);
    const csrfToken = await csrfFor(jar);
    const res = await callRoute(callbackEmail.action, post("/auth/callback/email", { csrfToken, code: codeIn(message!) }, { jar }));
    jar.apply(res);
    expect(await sessionOf(jar)).not.toBeNull();
    const { path, page } = await verifyPage(jar);
    expect(page).toMatchObject({ signedInAs: "sam@example.com", codeForm: null, address: null, resend: null });
    for (const locale of LOCALES) {
      const text = textOf(renderPage(verifyRequest, path, locale, { loaderData: page }));
      expect(text).toContain(runWithLocale(locale, () => t("verify.nothingToWaitFor")));
      expect(text).not.toContain(runWithLocale(locale, () => t("emailCode.checkTitle")));
    }
  });
});
