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
  // The example pages of docs/build-your-app.md (app/routes/examples/profile.tsx, editors.tsx).
  "example.profile.title": "Ihr Profil",
  "example.profile.confirm": "Bestätigen, dass ich es bin",
  "example.profile.confirmed": "Bestätigt: Sie haben sich gerade angemeldet.",
  "example.profile.refused": "Dieses Formular ist abgelaufen. Laden Sie die Seite neu und senden Sie es erneut.",
  "example.editors.title": "Redaktion",
  "example.editors.role": "Ihre Rolle: {role}.",
  "example.editors.publish": "Veröffentlichen",
  "example.editors.published": "Veröffentlicht.",
  // The label of the example role of app/auth.config.ts: each role the app adds has "admin.role.<name>" here, in every language.
  "admin.role.editor": "Redakteur",
};
