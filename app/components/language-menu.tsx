import { useEffect } from "react";
import { useT } from "~/i18n/react";
import { keepTypedFields, restoreTypedFields } from "./kept-fields";

/**
 * The language menu of every page: a plain form POSTing the choice to /language, which sets the
 * `lang` cookie and sends the browser back to this page (`returnTo`). Works without JavaScript;
 * each language is named in itself, and marked with its own `lang` so it is read out right. With
 * JavaScript, what the visitor typed on the page comes back after the change (kept-fields.ts).
 */
export function LanguageMenu({ languages, current, returnTo }: { languages: { code: string; name: string }[]; current: string; returnTo: string }) {
  const t = useT();
  // The page's typed values come back after the change of language (kept-fields.ts).
  useEffect(() => restoreTypedFields(returnTo), [returnTo]);
  if (languages.length < 2) return null;
  return (
    <form method="post" action="/language" className="language-menu" id="language-menu" onSubmit={() => keepTypedFields(returnTo)}>
      <input type="hidden" name="returnTo" value={returnTo} />
      <label htmlFor="language-select">{t("language.menu")}</label>
      <select id="language-select" name="lang" defaultValue={current}>
        {languages.map((l) => (
          <option key={l.code} value={l.code} lang={l.code}>
            {l.name}
          </option>
        ))}
      </select>
      <button type="submit" className="button secondary inline">
        {t("language.change")}
      </button>
    </form>
  );
}
