// The shape of the app's own auth configuration (app/auth.config.ts): the roles it adds to `user`
// and `admin` with the permissions each grants, and the extra claims a session carries. Types and
// one identity function only: app/auth.config.ts imports this, and core/app-config.server.ts
// reads that file, so nothing here may import either (docs/build-your-app.md).
import type { User } from "../../../prisma/generated/sqlite/client.ts";

/** The roles every app has: `user` (the default) and `admin` (ADR 077). */
export const BUILT_IN_ROLES = ["user", "admin"] as const;
export type BuiltInRole = (typeof BUILT_IN_ROLES)[number];

/** A role the app adds: the permissions it grants (`"notes:edit"`: a word, a colon, a word). */
export type RoleDefinition = { readonly permissions: readonly string[] };

/** The user row as the database has it, with any column the app added to prisma/models.prisma. */
export type SessionUserRow = User;

/** A JSON value: what the session's extra claims are made of (they travel in the cookie or the /auth/session answer). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type AuthConfig<Roles extends Record<string, RoleDefinition>, Extra extends Record<string, JsonValue>> = {
  /** Roles beyond `user` and `admin`, by name; `admin` holds every permission named here. */
  readonly roles: Roles & { readonly [K in BuiltInRole]?: never };
  /**
   * Extra claims of the session's `user` (GET /auth/session, useSession()): computed at sign-in
   * and at each re-issue for jwt sessions (kept in the cookie), at each read for database ones.
   * `id`, `name`, `email` and `image` are the layer's and are never replaced.
   */
  readonly session?: (args: { user: SessionUserRow }) => Extra;
};

/**
 * The app's configuration, as written, with its role and permission names kept as literal types so
 * that `requireRole(request, "editor")` and `requirePermission(request, "notes:edit")` are checked.
 */
export function defineAuthConfig<const Roles extends Record<string, RoleDefinition> = {}, Extra extends Record<string, JsonValue> = {}>(config: AuthConfig<Roles, Extra>): AuthConfig<Roles, Extra> {
  return config;
}
