// Which language a request gets: the lang cookie, then Accept-Language by
// quality, then English; anything malformed is ignored, never an error.
import { describe, expect, it } from "vitest";
import { fromAcceptLanguage, negotiateLocale } from "../../../app/i18n/negotiate.server";
import { returnPath } from "../../../app/i18n/language-choice.server";

const request = (headers: Record<string, string>) => new Request("http://localhost:3000/", { headers });

describe("Accept-Language", () => {
  it.each([
    ["de", "de"],
    ["de-AT,de;q=0.9", "de"],
    ["FR-ca", "fr"],
    ["en;q=0.5, ar;q=0.8", "ar"],
    ["ja, fr;q=0.3, de;q=0.2", "fr"],
    ["de;q=0.2, fr;q=0.2", "de"],
    ["*;q=1, fr;q=0.1", "fr"],
    ["de;q=0, fr;q=0.001", "fr"],
  ])("%j → %s", (header, locale) => expect(fromAcceptLanguage(header)).toBe(locale));

  it.each(["", "ja", "de;q=0", "de;q=2", "de;q=abc", "de;q=0.5000", "<script>", "d€", "de;;q", ",,,", "x".repeat(10_000), "de-".repeat(300)])(
    "%j → nothing (English)",
    (header) => expect(fromAcceptLanguage(header)).toBeNull(),
  );
});

describe("negotiateLocale", () => {
  it("the lang cookie beats Accept-Language; a bad cookie falls back to the header, then English", () => {
    expect(negotiateLocale(request({ Cookie: "lang=ar", "Accept-Language": "de" }))).toBe("ar");
    expect(negotiateLocale(request({ Cookie: "lang=xx", "Accept-Language": "de" }))).toBe("de");
    expect(negotiateLocale(request({ Cookie: "lang=toString" }))).toBe("en");
    expect(negotiateLocale(request({ Cookie: "lang=%E0%A4%A", "Accept-Language": "fr" }))).toBe("fr");
    expect(negotiateLocale(request({ Cookie: "lang=DE" }))).toBe("en");
    expect(negotiateLocale(request({ Cookie: "lang=de; lang=fr" }))).toBe("en");
    expect(negotiateLocale(request({}))).toBe("en");
  });
});

describe("the language menu's way back", () => {
  const origin = "http://localhost:3000";
  it.each([
    ["/account?updated=profile", "/account?updated=profile"],
    ["/auth/signin?callbackUrl=%2Faccount", "/auth/signin?callbackUrl=%2Faccount"],
    ["//evil.example/x", "/"],
    ["/\\evil.example", "/"],
    ["https://evil.example/", "/"],
    [`${origin}/account`, "/"],
    ["/\t/evil.example", "/"],
    ["/.//evil.example", "/"],
    ["javascript:alert(1)", "/"],
    ["", "/"],
  ])("%j → %s", (value, path) => expect(returnPath(value, origin)).toBe(path));
  it("a value that is not a string goes home", () => expect(returnPath(["/account"], origin)).toBe("/"));
});
