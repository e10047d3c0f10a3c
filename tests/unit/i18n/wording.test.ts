// One word for one thing across the catalogues: a reader who meets "sign-in link" on one page and
// "sign in link" on the next wonders whether they are two things. English writes the compound
// with a hyphen when it stands before a noun ("sign-in link"), as the verb stays "sign in".
import { describe, expect, it } from "vitest";
import { en } from "../../../app/i18n/catalogues/en";
import { de } from "../../../app/i18n/catalogues/de";
import { fr } from "../../../app/i18n/catalogues/fr";

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
});
