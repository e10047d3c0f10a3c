// The one name rule (ADR 108): what a typed name may hold, how a provider's name is made safe,
// how an e-mail repeats a name someone else chose, and how /admin shows a stored one.
import { describe, expect, it } from "vitest";
import { checkName, mailSafeName, sanitizeName, visibleName } from "../../../app/auth/core/display-text";

describe("checkName (typed by a person)", () => {
  it.each(["Ada Lovelace", "Zoë", "Ngọc Ánh", "👩‍💻 Ada", "می‌خواهم", "e\u0301"])("keeps %j", (name) => {
    expect(checkName(name)).toEqual({ ok: true, name: name.normalize("NFC") });
  });

  it.each([
    ["an override", "a\u202Eb"],
    ["an isolate", "a\u2066b"],
    ["a control", "a\u0007b"],
    ["a zero-width space", "a\u200Bb"],
    ["a word joiner", "a\u2060b"],
    ["a soft hyphen", "a\u00ADb"],
    ["a leading joiner", "\u200Dab"],
    ["a lone combining mark", "a \u0301b"],
    // "x" takes no precomposed accent: NFC leaves all five marks.
    ["five stacked marks", "x\u0301\u0302\u0303\u0304\u0305"],
  ])("refuses %s", (_, name) => {
    expect(checkName(name)).toEqual({ ok: false, reason: "not-text" });
  });

  it("counts what a browser's maxlength counts, and says the length", () => {
    expect(checkName("x".repeat(100)).ok).toBe(true);
    expect(checkName("x".repeat(101))).toEqual({ ok: false, reason: "too-long", max: 100, length: 101 });
    expect(checkName("   ")).toEqual({ ok: false, reason: "empty" });
  });
});

describe("sanitizeName (a provider's profile)", () => {
  it("drops what hides or reorders text, keeps the rest, collapses spaces", () => {
    expect(sanitizeName("\u0301Mal\u200Blory\u202Efdp.exe\uFEFF  line\nbreak")).toBe("Malloryfdp.exe line break");
    expect(sanitizeName("👩‍💻 Ada\u200D")).toBe("👩‍💻 Ada");
    expect(sanitizeName("x\u0301\u0302\u0303\u0304\u0305\u0306")).toBe("x\u0301\u0302\u0303\u0304");
  });

  it("cuts at the limit, never inside a character; nothing left is null", () => {
    const cut = sanitizeName(`${"x".repeat(99)}😀😀`)!;
    expect(cut).toBe("x".repeat(99));
    expect(sanitizeName("\u202E\u200B")).toBeNull();
    expect(sanitizeName(42)).toBeNull();
  });
});

describe("mailSafeName and visibleName", () => {
  it("an e-mail never repeats a link: schemes, www. and dotted hosts are written out", () => {
    expect(mailSafeName("Visit https://evil.example/fix or www.evil.example")).toBe("Visit https[:]//evil[.]example/fix or www[.]evil[.]example");
    expect(mailSafeName("x".repeat(200))).toBe("x".repeat(80));
  });

  it("/admin names every hidden character of a stored name", () => {
    expect(visibleName("Invoice\u202Efdp.exe\u200B")).toBe("Invoice⟨U+202E⟩fdp.exe⟨U+200B⟩");
    expect(visibleName(null)).toBeNull();
  });
});
