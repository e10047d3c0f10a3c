// The app's own French text: the same keys as ./en.ts, merged with the layer's
// ../catalogues/fr.ts at load (../merge.ts). docs/features/languages.md
import type { AppCatalogue } from "./en";

export const appFr: AppCatalogue = {
  // The example page for developers (app/routes/examples/session.tsx).
  "example.session.title": "Exemple de session",
  "example.session.fromPage": "Depuis les données de la page (useSession de ~/auth/react)",
  "example.session.fromNextAuth": "Depuis /auth/session (useSession de next-auth/react)",
  "example.session.signedInAs": "Connecté en tant que {address}.",
  "example.session.signedOut": "Non connecté.",
  "example.session.loading": "Chargement…",
  // The example pages of docs/build-your-app.md (app/routes/examples/profile.tsx, editors.tsx).
  "example.profile.title": "Votre profil",
  "example.profile.confirm": "Confirmer que c’est moi",
  "example.profile.confirmed": "Confirmé : vous vous êtes connecté il y a un instant.",
  "example.profile.refused": "Ce formulaire a expiré. Rechargez la page et envoyez-le à nouveau.",
  "example.editors.title": "Éditeurs",
  "example.editors.role": "Votre rôle : {role}.",
  "example.editors.publish": "Publier",
  "example.editors.published": "Publié.",
  // The label of the example role of app/auth.config.ts: each role the app adds has "admin.role.<name>" here, in every language.
  "admin.role.editor": "Éditeur",
};
