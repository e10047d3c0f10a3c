// Left-to-right fragments in right-to-left text (ADR 161): every Latin word, address, path or code
// the Arabic catalogue writes into a sentence is isolated (U+2066 … U+2069, what <bdi dir="ltr">
// is in markup), so its punctuation and neighbours keep their places; a date's time zone is said in
// the page's own words where the short name would be Latin in an Arabic date ("UTC" → "التوقيت
// العالمي المنسق"); German and French keep their "UTC", which is how they write it.
import { parse, TYPE, type MessageFormatElement } from "@formatjs/icu-messageformat-parser";
import { describe, expect, it } from "vitest";
import { ar } from "../../../app/i18n/catalogues/ar";
import { appAr } from "../../../app/i18n/app/ar";
import { messagesOf } from "../../../app/i18n/languages.server";
import { formatDateTime } from "../../../app/components/local-time";

/** The text a reader sees of `elements`, outside placeholders, with each isolate's content left out; <path> tags are markup (<bdi>). */
function bareText(elements: MessageFormatElement[]): string {
  let text = "";
  for (const el of elements) {
    if (el.type === TYPE.literal) text += el.value;
    if (el.type === TYPE.tag && el.value !== "path") text += bareText(el.children);
    if (el.type === TYPE.plural || el.type === TYPE.select) for (const option of Object.values(el.options)) text += ` ${bareText(option.value)} `;
  }
  return text.replace(/\u2066[^\u2069]*\u2069/g, "");
}

describe("left-to-right words in the Arabic pages", () => {
  it("every Latin word of the Arabic catalogues (JSON, DNS, SAML, name@example.com …) is isolated left to right", () => {
    const bare = Object.entries({ ...ar, ...appAr })
      .map(([key, text]) => [key, bareText(parse(text)).match(/[A-Za-z]+/g)] as const)
      .filter(([, latin]) => latin)
      .map(([key, latin]) => `${key}: ${latin!.join(" ")}`);
    expect(bare).toEqual([]);
    // The rule has something to hold: the export's file type is there, isolated.
    expect(ar["lifecycle.exportIntro"]).toContain("\u2066JSON\u2069");
    expect(ar["org.audit.downloadJson"]).toContain("\u2066JSON\u2069");
  });

  it("the organization's address in the short name's help is markup (<path>, shown as <bdi dir=ltr>) in every language", () => {
    for (const locale of ["en", "de", "fr", "ar"] as const) expect(messagesOf(locale)["org.new.slugHelp"], locale).toContain("(<path>/orgs/…</path>)");
  });

  it("an Arabic date names UTC in Arabic words; German, French and English keep the short name", () => {
    const at = "2026-12-07T22:05:00Z";
    const arabic = formatDateTime(at, "ar", "UTC");
    expect(arabic).toContain("التوقيت العالمي المنسق");
    expect(arabic).not.toMatch(/[A-Za-z]/);
    // A zone whose short Arabic name is already Arabic ("غرينتش+1") stays short.
    expect(formatDateTime(at, "ar", "Europe/Berlin")).toMatch(/غرينتش\+1$/);
    expect(formatDateTime(at, "de", "UTC")).toMatch(/ UTC$/);
    expect(formatDateTime(at, "fr", "UTC")).toMatch(/ UTC$/);
    expect(formatDateTime(at, "en", "UTC")).toMatch(/ UTC$/);
  });
});
