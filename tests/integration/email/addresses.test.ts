// What the e-mail form accepts. Every refused form goes back to the sign-in page with EmailInvalid
// (shown at the e-mail field), sends nothing and stores nothing; every accepted form reaches the
// mail server as exactly one recipient: the normalised address.
import { describe, expect, it } from "vitest";
import { MAX_EMAIL_ADDRESS_LENGTH, normalizeEmailAddress } from "../../../app/auth/core/email-address.ts";
import { signinPageData } from "../../../app/auth/signin/pages.server.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar, get } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { location, requestLink, useSmtpSink } from "./helpers.ts";

const smtp = useSmtpSink();

const REFUSED: [string, string][] = [
  ["quoted local part hiding an @", '"victim@example.com"@attacker.example'],
  ["quoted local part", '"john doe"@example.com'],
  ["two @", "victim@example.com@attacker.example"],
  ["comma-separated list", "victim@example.com,attacker@attacker.example"],
  ["comma in the domain", "victim@example.com,attacker.example"],
  ["semicolon list", "victim@example.com;attacker@attacker.example"],
  ["full-width ＠ after a real @", "victim@example.com＠attacker.example"],
  ["small ﹫ before a real @", "victim﹫example.com@attacker.example"],
  ["full-width ＠ twice", "victim＠example.com＠attacker.example"],
  ["space inside", "vic tim@example.com"],
  ["no-break space inside", "victim\u00a0@example.com"],
  ["tab inside", "victim@exa\tmple.com"],
  ["CRLF header injection", "victim@example.com\r\nBcc: attacker@attacker.example"],
  ["DEL", "victim\u007f@example.com"],
  ["zero-width joiner", "vic\u200dtim@example.com"],
  ["right-to-left override", "victim@\u202eexample.com"],
  ["no dot in the domain", "victim@localhost"],
  ["no @", "victim.example.com"],
  ["empty local part", "@example.com"],
  ["empty domain", "victim@"],
  ["trailing dot", "victim@example.com."],
  ["leading dot in the local part", ".victim@example.com"],
  ["two dots in a row", "vic..tim@example.com"],
  ["angle brackets", "<victim@example.com>"],
  ["display name", "Victim <victim@example.com>"],
  ["comment", "victim(comment)@example.com"],
  ["IP literal", "victim@[127.0.0.1]"],
  ["numeric top-level label", "victim@10.0.0.1"],
  ["label starting with a hyphen", "victim@-example.com"],
  ["backslash", "vic\\tim@example.com"],
  ["only spaces", "   "],
  ["empty", ""],
  ["local part over 64 characters", `${"a".repeat(65)}@example.com`],
  ["over 254 characters", `${"a".repeat(60)}@${"b".repeat(60)}.${"c".repeat(60)}.${"d".repeat(60)}.${"e".repeat(20)}.com`],
];

describe(`refused addresses (${dbLabel})`, () => {
  for (const [what, email] of REFUSED) {
    it(`${what}: back to the form, nothing sent or stored`, async () => {
      const res = await requestLink(new CookieJar(), { email });
      expect(res).toHaveErrorRedirect("EmailInvalid");
      const to = location(res);
      expect(to.pathname).toBe("/auth/signin");
      expect(to.searchParams.get("email") ?? "").toBe(email.slice(0, MAX_EMAIL_ADDRESS_LENGTH));
      expect(await testDb().verificationToken.count()).toBe(0);
      expect(await testDb().limitCounter.count()).toBe(0);
      expect(normalizeEmailAddress(email).ok).toBe(false);
    });
  }

  it("NUL: refused by the body reader before the form is read (400), nothing sent or stored", async () => {
    const res = await requestLink(new CookieJar(), { email: "victim@example.com\u0000" });
    expect(res.status).toBe(400);
    expect(await testDb().verificationToken.count()).toBe(0);
    expect(await testDb().limitCounter.count()).toBe(0);
  });

  it("a missing field, or an array in a JSON body, is refused the same way", async () => {
    expect(await requestLink(new CookieJar(), { email: undefined })).toHaveErrorRedirect("EmailInvalid");
    expect(await requestLink(new CookieJar(), { email: ["a@example.com", "b@example.com"] }, { bodyJson: true })).toHaveErrorRedirect(
      "EmailInvalid",
    );
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("the sign-in page shows the text for it and keeps what was typed", async () => {
    const res = await requestLink(new CookieJar(), { email: "a@b@example.com" });
    const page = await signinPageData(get(location(res).pathname + location(res).search));
    expect(page.data.error).toEqual({ code: "EmailInvalid", message: "Unable to sign in." });
    expect(page.data.email).toBe("a@b@example.com");
  });

  it("nothing at all reached the mail server", async () => {
    for (const [, email] of REFUSED) await requestLink(new CookieJar(), { email });
    // A valid request afterwards proves the server was reachable the whole time.
    await requestLink(new CookieJar(), { email: "fine@example.com" });
    await smtp.sink.waitFor(1);
    expect(smtp.sink.messages.map((m) => m.envelope.to)).toEqual([["fine@example.com"]]);
  });
});

const ACCEPTED: [string, string, string][] = [
  ["upper case and spaces around", "  Alice.Smith@EXAMPLE.com ", "alice.smith@example.com"],
  ["full-width letters", "ａｌｉｃｅ@example.com", "alice@example.com"],
  ["a lone full-width ＠ (NFKC makes it the only @)", "alice＠example.com", "alice@example.com"],
  ["plus addressing", "alice+vestibule@example.com", "alice+vestibule@example.com"],
  ["sub-domains", "alice@mail.eu.example.co.uk", "alice@mail.eu.example.co.uk"],
  ["apostrophe", "o'brien@example.ie", "o'brien@example.ie"],
];

describe(`accepted addresses (${dbLabel})`, () => {
  for (const [what, typed, normalised] of ACCEPTED) {
    it(`${what}: one recipient, exactly ${normalised}`, async () => {
      const res = await requestLink(new CookieJar(), { email: typed });
      expect(location(res).pathname).toBe("/auth/verify-request");
      const [message] = await smtp.sink.waitFor(1);
      expect(smtp.sink.messages).toHaveLength(1);
      expect(message!.envelope.to).toEqual([normalised]);
      expect(message!.to).toBe(normalised);
      expect(linkIn(message!).searchParams.get("email")).toBe(normalised);
      const rows = await testDb().verificationToken.findMany();
      expect(rows.map((r) => r.identifier)).toEqual([normalised]);
      // Normalising the stored form changes nothing.
      expect(normalizeEmailAddress(normalised)).toEqual({ ok: true, address: normalised });
    });
  }
});
