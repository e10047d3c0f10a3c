// One word for one thing across the catalogues: a reader who meets "sign-in link" on one page and
// "sign in link" on the next wonders whether they are two things. English writes the compound
// with a hyphen when it stands before a noun ("sign-in link"), as the verb stays "sign in".
import { describe, expect, it } from "vitest";
import { en } from "../../../app/i18n/catalogues/en";
import { de } from "../../../app/i18n/catalogues/de";
import { fr } from "../../../app/i18n/catalogues/fr";
import { ar } from "../../../app/i18n/catalogues/ar";
import { formatMessage } from "../../../app/i18n/format";
import { mergeCatalogues } from "../../../app/i18n/merge";
import { appAr } from "../../../app/i18n/app/ar";

/** The Arabic pages' messages: the layer's and the app's, as the pages format them. */
const arMessages = mergeCatalogues("ar", ar, appAr);

/** The messages of `catalogue` that match `pattern`, as "key: text" so a failure names them. */
function matching(catalogue: Record<string, string>, pattern: RegExp): string[] {
  return Object.entries(catalogue)
    .filter(([, text]) => pattern.test(text))
    .map(([key, text]) => `${key}: ${text}`);
}

describe("the catalogues' wording", () => {
  it("a reader of the English pages always reads 'sign-in link', never 'sign in link'", () => {
    expect(matching(en, /\bsign in links?\b/i)).toEqual([]);
    // The hyphenated form is what the pages say (so the check above is not vacuous).
    expect(matching(en, /\bsign-in links?\b/i).length).toBeGreaterThan(1);
  });

  it("German and French name the link one way too: 'Anmeldelink', 'lien de connexion'", () => {
    expect(matching(de, /Anmelde-Link|Anmelde Link|Link zur Anmeldung|Anmeldungslink/i)).toEqual([]);
    expect(matching(fr, /lien d['’]identification|lien d['’]accès|lien pour (vous )?connecter/i)).toEqual([]);
  });

  it("Arabic counts letters with the plural forms a number asks for: 100 حرف, 11 حرفًا, 3 أحرف — never a bare number before a counted noun", () => {
    // A placeholder written straight before the noun cannot agree with the number: every count of letters is a plural.
    expect(matching(ar, /\}\s*(حرف|أحرف|حرفًا)/)).toEqual([]);
    const name = (max: number, length: number) => formatMessage("ar", arMessages, "name.tooLong", { max, length });
    expect(name(100, 120)).toBe("استخدم 100 حرف على الأكثر للاسم: هذا الاسم فيه 120 حرفًا.");
    expect(name(3, 2)).toBe("استخدم 3 أحرف على الأكثر للاسم: هذا الاسم فيه حرفين.");
    expect(formatMessage("ar", arMessages, "twoFactor.disableNeedsLongerPassword", { min: 15 })).toContain("أقصر من 15 حرفًا");
  });

  it("a section after the 'or' divider does not begin with 'or' again (no 'or — Or get a code')", () => {
    for (const catalogue of [en, fr, de, ar]) {
      const or = catalogue["signin.or"].toLowerCase();
      expect(catalogue["reauth.emailIntro"].toLowerCase().startsWith(`${or} `)).toBe(false);
    }
  });
});
