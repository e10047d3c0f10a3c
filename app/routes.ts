import { type RouteConfig, index, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx"),
  route("account", "routes/account.tsx"),
  route("welcome", "routes/welcome.tsx"),

  // The Auth.js-compatible endpoints under the base path /auth (contract §3).
  route("auth/providers", "routes/auth/providers.ts"),
  route("auth/session", "routes/auth/session.ts"),
  route("auth/csrf", "routes/auth/csrf.ts"),
  route("auth/signin", "routes/auth/signin.tsx"),
  route("auth/signin/:provider", "routes/auth/signin-provider.ts"),
  route("auth/callback/:provider", "routes/auth/callback.ts"),
  route("auth/signout", "routes/auth/signout.tsx"),
  route("auth/verify-request", "routes/auth/verify-request.tsx"),
  route("auth/error", "routes/auth/error.tsx"),
  route("auth/_log", "routes/auth/log.ts"),
  route("auth/*", "routes/auth/unknown.ts"),

  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
