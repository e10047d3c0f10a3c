// A language's whole text: the auth layer's catalogue (./catalogues/) and the app's own
// (./app/), merged. The two never share a key: a key both define would make one text silently
// hide the other, so it stops the start with the key named. No server-only imports: the pages'
// English fallback (./react.tsx) is built here too. docs/features/languages.md
import type { Catalogue, Messages } from "./catalogues/en";
import type { AppCatalogue } from "./app/en";

/** The layer's and the app's text of `locale`, as one catalogue; throws naming any key both define. */
export function mergeCatalogues(locale: string, layer: Catalogue, app: AppCatalogue): Messages {
  const clashes = Object.keys(app).filter((key) => Object.hasOwn(layer, key));
  if (clashes.length > 0) {
    throw new Error(
      `The app's catalogue app/i18n/app/${locale}.ts defines ${clashes.map((k) => `"${k}"`).join(", ")}, which the auth layer's catalogue app/i18n/catalogues/${locale}.ts already has: give the app's text a key of its own (e.g. "notes.title")`,
    );
  }
  return { ...layer, ...app };
}
