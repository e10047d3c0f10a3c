// The app's own German text: the same keys as ./en.ts, merged with the layer's
// ../catalogues/de.ts at load (../merge.ts). docs/features/languages.md
import type { AppCatalogue } from "./en";

export const appDe: AppCatalogue = {
  // The example page for developers (app/routes/examples/session.tsx).
  "example.session.title": "Sitzungsbeispiel",
  "example.session.fromPage": "Aus den Daten der Seite (useSession aus ~/auth/react)",
  "example.session.fromNextAuth": "Von /auth/session (useSession aus next-auth/react)",
  "example.session.signedInAs": "Angemeldet als {address}.",
  "example.session.signedOut": "Nicht angemeldet.",
  "example.session.loading": "Wird geladen …",
};
