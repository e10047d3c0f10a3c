// The address rule and the e-mail texts' lifetime wording, as plain functions.
import { describe, expect, it } from "vitest";
import { normalizeEmailAddress } from "../../../app/auth/core/email-address.ts";
import { describeLifetime, signInMessage } from "../../../app/mail/templates.server.ts";

describe("normalizeEmailAddress", () => {
  it("normalises NFKC, case and surrounding space, and is idempotent", () => {
    for (const [input, out] of [
      ["  Foo@Example.COM\n", "foo@example.com"],
      ["ＦＯＯ＠ＥＸＡＭＰＬＥ．ＣＯＭ", "foo@example.com"],
      ["İnci@example.com", "i̇nci@example.com"],
      ["bob+tag@bücher.de", "bob+tag@bücher.de"],
    ] as const) {
      const once = normalizeEmailAddress(input);
      expect(once).toEqual({ ok: true, address: out });
      expect(normalizeEmailAddress(out)).toEqual(once);
    }
  });

  it("gives a reason for each refusal (for the log, never the visitor)", () => {
    expect(normalizeEmailAddress(undefined)).toEqual({ ok: false, reason: "missing" });
    expect(normalizeEmailAddress("a@b@c.com")).toEqual({ ok: false, reason: "more than one @" });
    expect(normalizeEmailAddress("a@localhost")).toEqual({ ok: false, reason: "domain without a dot" });
    expect(normalizeEmailAddress("x".repeat(2000))).toEqual({ ok: false, reason: "too long" });
  });
});

describe("describeLifetime", () => {
  it.each([
    [86_400, "24 hours"],
    [3_600, "1 hour"],
    [5_400, "1 hour and 30 minutes"],
    [900, "15 minutes"],
    [60, "1 minute"],
    [604_800, "7 days"],
  ])("%i s → %s", (seconds, text) => expect(describeLifetime(seconds)).toBe(text));
});

describe("signInMessage", () => {
  it("escapes what it puts into HTML", () => {
    const m = signInMessage({ to: "o'brien@example.ie", url: "https://app.example.com/auth/callback/email?token=a&email=b", host: "app.example.com", maxAgeSeconds: 86_400 });
    expect(m.html).toContain("o&#39;brien@example.ie");
    expect(m.html).toContain('href="https://app.example.com/auth/callback/email?token=a&amp;email=b"');
    expect(m.text).toContain("https://app.example.com/auth/callback/email?token=a&email=b");
    expect(m.link).toBe("https://app.example.com/auth/callback/email?token=a&email=b");
  });
});
