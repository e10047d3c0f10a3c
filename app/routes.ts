import { type RouteConfig, index, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx"),
  route("account", "routes/account.tsx"),
  route("account/email", "routes/account-email.tsx"),
  route("welcome", "routes/welcome.tsx"),
  // Organizations (docs/features/organizations.md); every URL answers 404 unless AUTH_ORGANIZATIONS=true.
  route("orgs", "routes/orgs.tsx"),
  route("orgs/new", "routes/orgs-new.tsx"),
  route("orgs/switch", "routes/orgs-switch.ts"),
  route("orgs/invitation", "routes/orgs-invitation.tsx"),
  route("orgs/:slug", "routes/orgs-org.tsx"),
  route("orgs/:slug/audit", "routes/orgs-audit.tsx"),
  // SCIM 2.0 provisioning per organization (docs/features/scim.md); 404 unless AUTH_ORGANIZATIONS=true.
  route("scim/v2/*", "routes/scim.ts"),
  route("sso/:id/metadata", "routes/sso-metadata.ts"),
  route("sso/:id/signin", "routes/sso-signin.ts"),
  route("sso/:id/acs", "routes/sso-acs.ts"),
  route("sso/:id/finish", "routes/sso-finish.ts"),
  route("sso/oidc/:id/signin", "routes/sso-oidc-signin.ts"),
  route("sso/oidc/:id/callback", "routes/sso-oidc-callback.ts"),
  // The language menu's form.
  route("language", "routes/language.ts"),

  // The Auth.js-compatible endpoints under the base path /auth.
  route("auth/providers", "routes/auth/providers.ts"),
  route("auth/session", "routes/auth/session.ts"),
  route("auth/csrf", "routes/auth/csrf.ts"),
  route("auth/signin", "routes/auth/signin.tsx"),
  route("auth/signin/:provider", "routes/auth/signin-provider.ts"),
  // The e-mail link: a page route, for the "Sign in as …" page of AUTH_EMAIL_CONFIRM=true.
  route("auth/callback/email", "routes/auth/callback-email.tsx"),
  route("auth/callback/:provider", "routes/auth/callback.ts"),
  route("auth/webauthn-options/:provider", "routes/auth/webauthn-options.ts"),
  route("auth/signout", "routes/auth/signout.tsx"),
  route("auth/verify-request", "routes/auth/verify-request.tsx"),
  route("auth/error", "routes/auth/error.tsx"),
  route("auth/two-factor", "routes/auth/two-factor.tsx"),
  // Re-authentication of the signed-in user before a sensitive change.
  route("auth/reauth", "routes/auth/reauth.tsx"),
  route("auth/_log", "routes/auth/log.ts"),
  route("auth/csp-report", "routes/auth/csp-report.ts"),
  // Passwords for visitors; off → the same 400 as an unknown action.
  route("auth/signup", "routes/auth/signup.tsx"),
  route("auth/forgot-password", "routes/auth/forgot-password.tsx"),
  route("auth/reset-password", "routes/auth/reset-password.tsx"),
  // "This wasn't me", the link of every security e-mail (ADR 081).
  route("auth/wasnt-me", "routes/auth/wasnt-me.tsx"),
  route("auth/*", "routes/auth/unknown.ts"),

  // Vestibule's OAuth provider (docs/features/provider.md): an authorization in progress, sign-in
  // then consent. The engine's own endpoints are answered before React Router (server/main.ts).
  route("oauth/consent/:uid", "routes/oauth-consent.tsx"),

  // Resources that accept Vestibule's access tokens, and their metadata (docs/features/mcp.md);
  // each answers 404 unless AUTH_PROVIDER=true.
  route(".well-known/oauth-protected-resource", "routes/well-known/oauth-protected-resource.ts", { id: "protected-resource-metadata" }),
  route(".well-known/oauth-protected-resource/*", "routes/well-known/oauth-protected-resource.ts", { id: "protected-resource-metadata-path" }),
  route("api/me", "routes/api/me.ts"),
  route("mcp", "routes/mcp.ts"),

  // Development only: `react-router build` runs with NODE_ENV=production, so no build has it.
  ...(process.env.NODE_ENV === "production" ? [] : [route("dev/outbox", "routes/dev/outbox.tsx")]),

  // A documented example page (docs/app-pages.md): under `npm run dev`, and in a build made with
  // VESTIBULE_EXAMPLES=1 (the browser tests' build); a production build has it only when asked.
  // The pages docs/build-your-app.md quotes: a protected page and form, a role and a permission.
  ...(process.env.NODE_ENV !== "production" || process.env.VESTIBULE_EXAMPLES === "1"
    ? [route("examples/session", "routes/examples/session.tsx"), route("examples/profile", "routes/examples/profile.tsx"), route("examples/editors", "routes/examples/editors.tsx")]
    : []),

  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
