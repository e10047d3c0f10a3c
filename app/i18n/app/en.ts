// The app's own English text: the keys of every page that is the app's and not the auth layer's
// (the layer's are in ../catalogues/). English is the source of the app's keys, as for the layer:
// a key missing from, or extra in, ./de.ts, ./fr.ts or ./ar.ts fails `npm run typecheck`. At load
// the app's catalogue of each language is merged with the layer's (../merge.ts); a key both define
// stops the start naming it. Give your keys your own prefix ("notes.title"). docs/features/languages.md
export const appEn = {
  // The example page for developers (app/routes/examples/session.tsx).
  "example.session.title": "Session example",
  "example.session.fromPage": "From the page's data (useSession from ~/auth/react)",
  "example.session.fromNextAuth": "From /auth/session (useSession from next-auth/react)",
  "example.session.signedInAs": "Signed in as {address}.",
  "example.session.signedOut": "Not signed in.",
  "example.session.loading": "Loading…",
  // The example pages of docs/build-your-app.md (app/routes/examples/profile.tsx, editors.tsx).
  "example.profile.title": "Your profile",
  "example.profile.confirm": "Confirm it is me",
  "example.profile.confirmed": "Confirmed: you signed in moments ago.",
  "example.profile.refused": "This form has expired. Reload the page and send it again.",
  "example.editors.title": "Editors",
  "example.editors.role": "Your role: {role}.",
  "example.editors.publish": "Publish",
  "example.editors.published": "Published.",
  // The label of the example role of app/auth.config.ts: each role the app adds has "admin.role.<name>" here, in every language.
  "admin.role.editor": "Editor",
} as const;

/** Every key of the app's catalogue. */
export type AppKey = keyof typeof appEn;
/** What every language's app catalogue is: exactly the app's English keys, each with its text. */
export type AppCatalogue = { readonly [K in AppKey]: string };
