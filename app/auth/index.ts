// `~/auth`: what the app's own routes use to know who is signed in and to protect a page, a form or
// a resource route (docs/build-your-app.md; ADR 118). Every helper takes the route's Request and
// returns `{ user, session, headers }`, or throws a Response the route lets through:
//
//   export async function loader({ request }: Route.LoaderArgs) {
//     const { user, headers } = await requireUser(request);
//     return data({ email: user.email }, { headers });
//   }
//
// - a page (a document request) that needs a session goes to the sign-in page, and comes back to
//   the page after it; a script's request (React Router's `.data` request, `Accept:
//   application/json`) gets `401 {"error":"SessionRequired","url"}`, `url` being that same page;
// - a role or permission the user lacks: `403` (the "not allowed" page in the visitor's language,
//   or `{"error":"Forbidden"}`), or with `{ hide: true }` the very 404 an unknown URL gets;
// - a sign-in older than `maxAge`: `403 {"error":"ReauthRequired","url"}` (the page shows a "sign in
//   again" link).
// No way back ever names a page's data request: the visitor always returns to the page
// (core/callback-url.server.ts). `headers` carries the session cookie a read re-issued (the rolling
// re-issue): pass it on; the root middleware adds it anyway when a route forgets (app/root.tsx).
// Roles and permissions are the app's (app/auth.config.ts), read from the database at each check.
import { db } from "../db/client.server";
import { isRole, roleGrants, type Permission, type Role } from "./core/app-config.server";
import { isRecentAuth, reauthRequiredResponse } from "./core/recent-auth.server";
import { pageOfRequest } from "./core/callback-url.server";
import { ensureCsrfToken, verifyCsrf as verifyCsrfToken } from "./core/csrf.server";
import { FORBIDDEN, headersWith, jsonRefusal, optionalSession, requireSession } from "./core/page-session.server";
import { authRequest } from "./core/request.server";
import { badRequest, jsonResponse } from "./core/respond.server";
import { BadRequestError, readBody } from "./core/body.server";
import type { CurrentSession, SessionData } from "./core/session.server";

export type { Permission, Role } from "./core/app-config.server";

/** The signed-in user: their id, and the session's user (name, email, image and the app's extra claims). */
export type User = SessionData["user"] & { id: string };

/** The signed-in session. */
export type Session = {
  user: User;
  /** When the session ends unless it is used again (ISO-8601). */
  expires: string;
  /** The session's id, as /account lists it (null: a cookie minted without one). */
  id: string | null;
  /** When this session's sign-in happened (not its last re-issue). */
  signedInAt: Date;
};

/** What every helper below returns: who, their session, and the headers to pass on (the re-issued cookie). */
export type Authorized = { user: User; session: Session; headers: Headers };

function toSession(current: CurrentSession): Session {
  const user = { ...current.data.user, id: current.userId } as User;
  return { user, expires: current.data.expires, id: current.sessionId, signedInAt: new Date(current.signedInAt * 1000) };
}

function authorized(current: CurrentSession, headers: Headers): Authorized {
  const session = toSession(current);
  return { user: session.user, session, headers };
}

/**
 * Who is signed in, if anyone: `{ session, headers }`, `session` null when no one is. For pages
 * that show the session without requiring it. While the database is unavailable, a database
 * session cannot be read: no one is signed in.
 */
export async function getSession(request: Request): Promise<{ session: Session | null; headers: Headers }> {
  const { session, headers } = await optionalSession(request);
  return { session: session ? toSession(session) : null, headers };
}

/**
 * The signed-in user, or a thrown answer: the sign-in page with this page as `callbackUrl` (a
 * page), `401 {"error":"SessionRequired","url"}` (a data or JSON request).
 */
export async function requireUser(request: Request): Promise<Authorized> {
  const { session, setCookies } = await requireSession(request);
  return authorized(session, headersWith(setCookies));
}

/**
 * requireUser, and a sign-in (or re-authentication) within `maxAge` seconds (default
 * AUTH_REAUTH_MAX_AGE) — for a change an old copy of a cookie must not make. Past it, a thrown
 * `403 {"error":"ReauthRequired","url"}`: the page shows a "sign in again" link that comes back here.
 */
export async function requireRecentAuth(request: Request, { maxAge }: { maxAge?: number } = {}): Promise<Authorized> {
  // Not re-issued here: a sensitive change that re-issues the cookie itself does it once.
  const { ar, session, setCookies } = await requireSession(request, { roll: false });
  if (!(await isRecentAuth(ar, session, { maxAge }))) throw reauthRequiredResponse(ar, pageOfRequest(ar.url));
  return authorized(session, headersWith(setCookies));
}

type Hide = { hide?: boolean };

/** The same answer an unknown URL gets (routes/not-found.tsx): nothing says the page exists. */
function hidden(): Response {
  return new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain;charset=utf-8" } });
}

/** `403 {"error":"Forbidden"}`: a page shows the "not allowed" page in the visitor's language (app/root.tsx). */
function forbidden(request: Request): Response {
  return jsonRefusal(request, jsonResponse({ error: FORBIDDEN }, { status: 403, noCache: true }));
}

/** The signed-in user whose row has a role passing `allowed` (read now: a change applies at the next request), or the refusal. */
async function requireUserWhose(request: Request, allowed: (role: string) => boolean, { hide = false }: Hide): Promise<Authorized & { role: Role }> {
  let required: Authorized;
  try {
    required = await requireUser(request);
  } catch (thrown) {
    // Hidden: a signed-out visitor gets the unknown-URL page too, not a way to sign in.
    if (hide && thrown instanceof Response && (thrown.status === 401 || (thrown.status >= 300 && thrown.status < 400))) throw hidden();
    throw thrown;
  }
  const row = await db().user.findUnique({ where: { id: required.user.id }, select: { role: true, disabledAt: true } });
  if (!row || row.disabledAt !== null || !isRole(row.role) || !allowed(row.role)) throw hide ? hidden() : forbidden(request);
  return { ...required, role: row.role };
}

/**
 * requireUser, and a user holding `role` (or one of `roles`): `user`, `admin` or one of the app's
 * (app/auth.config.ts). Otherwise a thrown `403`, or with `{ hide: true }` the unknown-URL 404
 * (signed-out visitors included), as /admin answers.
 */
export async function requireRole(request: Request, role: Role | readonly Role[], options: Hide = {}): Promise<Authorized & { role: Role }> {
  const wanted: readonly string[] = typeof role === "string" ? [role] : role;
  return requireUserWhose(request, (held) => wanted.includes(held), options);
}

/**
 * requireUser, and a user whose role grants `permission` (app/auth.config.ts; an admin holds every
 * permission named there). Otherwise a thrown `403`, or the unknown-URL 404 with `{ hide: true }`.
 */
export async function requirePermission(request: Request, permission: Permission, options: Hide = {}): Promise<Authorized & { role: Role }> {
  return requireUserWhose(request, (held) => roleGrants(held, permission), options);
}

/**
 * A form's fields by name. A URL-encoded form gives strings (the last of a repeated name); a JSON
 * body gives its strings, and its numbers and booleans as the text a form would have sent
 * (`{"count": 2}` reads as `"2"`); its nulls, arrays and objects are left out. A field not sent is
 * `undefined`, so `(form.text ?? "").trim()` is typed.
 */
export type FormFields = Record<string, string | undefined>;

/** The body's fields as a form has them: see FormFields. */
function formFields(body: Record<string, unknown>): FormFields {
  const fields: FormFields = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === "string") fields[name] = value;
    else if (typeof value === "number" || typeof value === "boolean") fields[name] = String(value);
  }
  return fields;
}

/**
 * The posted form (URL-encoded or JSON) as its fields (FormFields): read once, size-limited, and
 * shared with the layer's middleware that may have read it first — use it rather than
 * `request.formData()`. A body too large or of another type throws the 413 / 415 the error page
 * explains.
 */
export async function readForm(request: Request): Promise<FormFields> {
  try {
    return formFields(await readBody(request));
  } catch (error) {
    if (error instanceof BadRequestError) throw badRequest(error.status, error.message);
    throw error;
  }
}

/**
 * The CSRF token for a form of the app's own (`<input type="hidden" name="csrfToken">`), and the
 * headers that set its cookie when the browser has none yet. A POST from another site is refused
 * before any action runs (the root middleware); the token is a second lock (defence in depth).
 */
export function csrfToken(request: Request): { token: string; headers: Headers } {
  const { token, setCookie } = ensureCsrfToken(authRequest(request));
  return { token, headers: headersWith([setCookie]) };
}

/** True when `token` (the form's csrfToken field) matches this browser's CSRF cookie and the POST is not from another site. */
export function verifyCsrf(request: Request, token: unknown): boolean {
  return verifyCsrfToken(authRequest(request), token);
}

// The active organization of the session and the member's role in it (docs/features/organizations.md):
// `requireOrganization(request, { role })` returns `{ user, session, organization, membership, headers }`.
export { requireOrganization, type RequiredOrganization } from "./organizations/require.server";

// A route other apps, command-line tools and MCP clients call with an access token from
// Vestibule's OAuth provider (docs/features/mcp.md): `requireBearer(request, { scopes })` returns the
// checked token (`sub`, `client_id`, `scope`) or throws the 401/403 answer with WWW-Authenticate.
export { requireBearer, type BearerOptions, type BearerToken } from "./provider/bearer.server";
