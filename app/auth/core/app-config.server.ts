// The app's auth configuration (app/auth.config.ts), read once and checked when first used: the
// role names (`user`, `admin`, then the app's), what each may do, and the session's extra claims.
// core/ knows no sign-in method and no app route: it only reads the file the app owns.
import appConfig from "../../auth.config";
import { BUILT_IN_ROLES, type JsonValue, type SessionUserRow } from "./app-config";

/** What the app's configuration declares, with the literal types its file gives. */
export type AppAuthConfig = typeof appConfig;
type AppRoles = Omit<AppAuthConfig["roles"], (typeof BUILT_IN_ROLES)[number]>;
/** Every role: `user`, `admin` and the app's own. */
export type Role = (typeof BUILT_IN_ROLES)[number] | Extract<keyof AppRoles, string>;
/** Every permission a role of the app grants. */
export type Permission = { [K in keyof AppRoles]: AppRoles[K] extends { readonly permissions: readonly (infer P)[] } ? P : never }[keyof AppRoles] & string;
/** The extra claims session({ user }) adds to the session's user ({} without it). */
export type SessionExtras = AppAuthConfig extends { session?: (args: never) => infer E } ? (unknown extends E ? {} : Partial<E>) : {};

const NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const PERMISSION = /^[a-z][a-z0-9_-]{0,31}(?::[a-z0-9_*-]{1,32}){0,3}$/;
/** The claims the layer writes into the session's user, never taken from session({ user }). */
const OWN_CLAIMS = new Set(["id", "name", "email", "image"]);

type Checked = { roles: readonly string[]; permissions: ReadonlyMap<string, ReadonlySet<string>>; all: ReadonlySet<string> };
let checked: Checked | null = null;

/** Throws naming the mistake: a role spelt unlike a name, `user` or `admin` redefined, a malformed permission. */
function check(): Checked {
  const roles: string[] = [...BUILT_IN_ROLES];
  const permissions = new Map<string, ReadonlySet<string>>();
  const all = new Set<string>();
  for (const [name, definition] of Object.entries(appConfig.roles as unknown as Record<string, { permissions?: unknown }>)) {
    if (!NAME.test(name)) throw new Error(`app/auth.config.ts: the role "${name}" must be lower-case letters, digits, - or _ (at most 32)`);
    if ((BUILT_IN_ROLES as readonly string[]).includes(name)) throw new Error(`app/auth.config.ts: "${name}" is a built-in role and cannot be redefined`);
    const list = definition?.permissions;
    if (!Array.isArray(list) || list.some((p) => typeof p !== "string" || !PERMISSION.test(p))) {
      throw new Error(`app/auth.config.ts: the role "${name}" needs permissions: a list of names like "notes:edit"`);
    }
    roles.push(name);
    permissions.set(name, new Set(list as string[]));
    for (const p of list as string[]) all.add(p);
  }
  return { roles, permissions, all };
}

function config(): Checked {
  return (checked ??= check());
}

/** `user`, `admin`, then the app's roles in the order its file names them. */
export function roleNames(): readonly string[] {
  return config().roles;
}

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && config().roles.includes(value);
}

/** Whether `role` grants `permission`: an admin holds every permission; `user` none. */
export function roleGrants(role: string, permission: string): boolean {
  const { permissions, all } = config();
  if (role === "admin") return all.has(permission);
  return permissions.get(role)?.has(permission) ?? false;
}

/** Whether the app's configuration gives session({ user }). */
export function hasSessionExtras(): boolean {
  return typeof appConfig.session === "function";
}

/**
 * The extra claims for `user`, as JSON (a value JSON cannot carry is dropped, as JSON.stringify
 * drops it), without the layer's own claims. {} without session({ user }).
 */
export function sessionExtrasFor(user: SessionUserRow): Record<string, JsonValue> {
  const session = appConfig.session as ((args: { user: SessionUserRow }) => unknown) | undefined;
  if (typeof session !== "function") return {};
  const extra = session({ user });
  if (typeof extra !== "object" || extra === null || Array.isArray(extra)) throw new Error("app/auth.config.ts: session({ user }) must return an object");
  const json = JSON.parse(JSON.stringify(extra)) as Record<string, JsonValue>;
  for (const key of Object.keys(json)) if (OWN_CLAIMS.has(key)) delete json[key];
  return json;
}

/** Only the extra claims of a decoded value (a jwt claim, say): an object, without the layer's own. */
export function extrasOf(value: unknown): Record<string, JsonValue> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  const out: Record<string, JsonValue> = {};
  for (const [key, v] of Object.entries(value)) if (!OWN_CLAIMS.has(key)) out[key] = v as JsonValue;
  return out;
}
