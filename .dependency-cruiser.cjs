// The import rules of app/ (docs/decisions/030-auth-layout.md) and server/ (068), checked by `npm run check:cycles`
// and .ci/run. tests/unit/layout-check.test.ts proves each rule fails when broken.
//
// app/auth, from the top down; a folder imports only folders below it:
//   passwords/   visitor password flows (contract section 15): composes the methods, may import signin/
//   signin/      the shared flow and the registry (composition root): may import the methods
//   credentials/ email/ oauth/ (and later passkeys/): the sign-in methods
//   two-factor/  not a method: the second factor that gates the shared flow (ADR 043); the flow
//                calls it, methods never do, and it sees only accounts/ and core/
//   accounts/    users, the ways a user signs in, the audit trail
//   core/        knows no sign-in method
const METHODS = "(credentials|email|oauth|passkeys)";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycles anywhere under app/, type-only imports included.",
      severity: "error",
      from: { path: "^app/" },
      to: { circular: true },
    },
    {
      name: "core-knows-no-method",
      comment: "app/auth/core imports nothing from app/auth outside core/.",
      severity: "error",
      from: { path: "^app/auth/core/" },
      to: { path: "^app/auth/", pathNot: "^app/auth/core/" },
    },
    {
      name: "auth-without-react-router",
      comment: "app/auth is plain Request → Response functions; react-router belongs to app/routes.",
      severity: "error",
      from: { path: "^app/auth/" },
      to: { path: "(^|/)node_modules/(react-router|@react-router)/" },
    },
    {
      name: "accounts-only-on-core",
      comment: "app/auth/accounts imports only core/.",
      severity: "error",
      from: { path: "^app/auth/accounts/" },
      to: { path: "^app/auth/", pathNot: "^app/auth/(accounts|core)/" },
    },
    {
      name: "method-imports-no-other-method",
      comment: "A sign-in method folder never imports another method.",
      severity: "error",
      from: { path: `^app/auth/${METHODS}/` },
      to: { path: `^app/auth/${METHODS}/`, pathNot: "^app/auth/$1/" },
    },
    {
      name: "method-imports-only-the-flow-from-signin",
      comment:
        "Methods see signin/ only through provider.ts (types) and flow.server.ts (runStrategy); the registry, " +
        "the endpoints and the pages import the methods, never the other way round.",
      severity: "error",
      from: { path: `^app/auth/${METHODS}/` },
      to: { path: "^app/auth/signin/", pathNot: "^app/auth/signin/(provider\\.ts|flow\\.server\\.ts)$" },
    },
    {
      name: "flow-below-the-registry",
      comment: "signin/provider.ts and signin/flow.server.ts import only core/, accounts/, two-factor/ and each other.",
      severity: "error",
      from: { path: "^app/auth/signin/(provider\\.ts|flow\\.server\\.ts)$" },
      to: { path: "^app/auth/", pathNot: "^app/auth/(core|accounts|two-factor)/|^app/auth/signin/(provider\\.ts|flow\\.server\\.ts)$" },
    },
    {
      name: "two-factor-below-the-flow",
      comment: "app/auth/two-factor gates the shared flow from below: it imports only core/ and accounts/.",
      severity: "error",
      from: { path: "^app/auth/two-factor/" },
      to: { path: "^app/auth/", pathNot: "^app/auth/(core|accounts|two-factor)/" },
    },
    {
      name: "methods-never-import-two-factor",
      comment: "The second factor belongs to the shared flow: a sign-in method cannot skip, run or finish it.",
      severity: "error",
      from: { path: `^app/auth/${METHODS}/` },
      to: { path: "^app/auth/two-factor/" },
    },
    {
      name: "passwords-above-everything",
      comment:
        "app/auth/passwords (sign-up, forgotten password, the /account password intents) composes credentials/, " +
        "email/, accounts/, core/ and signin/; nothing else in app/auth imports it.",
      severity: "error",
      from: { path: "^app/auth/", pathNot: "^app/auth/passwords/" },
      to: { path: "^app/auth/passwords/" },
    },
    {
      name: "folder-index-is-for-routes",
      comment: "The index.ts of an app/auth folder is the surface for app/routes; app/auth imports modules directly.",
      severity: "error",
      from: { path: "^app/auth/" },
      to: { path: "^app/auth/[^/]+/index\\.ts$" },
    },
    {
      name: "mail-types-at-the-bottom",
      comment: "app/mail/types.ts imports nothing from app/; transports never import the picker (mailer.server.ts).",
      severity: "error",
      from: { path: "^app/mail/(types\\.ts|smtp\\.server\\.ts|outbox\\.server\\.ts)$" },
      to: { path: "^app/mail/mailer\\.server\\.ts$" },
    },
    {
      name: "server-sees-the-app-only-through-its-entry",
      comment:
        "server/ (the production runtime) runs the build; from app/ it may import the types of the server entry " +
        "(app/entry.server.tsx), whose exports are all it calls, and nothing else (docs/decisions/068).",
      severity: "error",
      from: { path: "^server/" },
      to: { path: "^(app|scripts|bench|tests)/", pathNot: "^app/entry\\.server\\.tsx$" },
    },
    {
      name: "app-knows-no-server",
      comment: "app/ runs under the dev server and the tests too: it never imports the production runtime.",
      severity: "error",
      from: { path: "^app/" },
      to: { path: "^server/" },
    },
    {
      name: "mail-types-import-nothing",
      severity: "error",
      from: { path: "^app/mail/types\\.ts$" },
      to: { path: "^app/" },
    },
  ],
  options: {
    // dependency-cruiser reads TypeScript through swc: its tsc extractor needs TypeScript's
    // JavaScript API, which TypeScript 7 (the native compiler) does not publish yet. swc keeps
    // `import type` and marks it type-only, so the cycle rule sees those edges without
    // tsPreCompilationDeps — an option that only switches to the tsc extractor, and, set with no
    // TypeScript below 7 installed, made every run warn that TypeScript files may have been
    // missed. tests/unit/layout-check.test.ts proves both (issue 33).
    parser: "swc",
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "(^|/)node_modules/" },
    exclude: { path: "^prisma/generated/" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js", ".mjs"] },
  },
};
