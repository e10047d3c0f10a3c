// /admin, the operator's console (issue 21, ADR 085): the user list, one
// user's page and its actions. The pages are answered by the catch-all route (not-found.tsx), so
// that everyone but a signed-in admin gets the unknown-URL page byte for byte: a route of its own
// would name itself in that page. Each action is the operation `npm run user:*` runs (same
// functions), behind requireAdmin, the CSRF token, the origin check (root middleware), the admin's
// recent sign-in, and writes an audit event naming the admin. Every action answers both shapes: a
// form post, and a JSON client (adminJson, run by the route's middleware).
import { data, redirect } from "react-router";
import { z } from "zod";
import { deleteAccount, eventSource, recentEvents } from "~/auth/accounts";
import {
  disableUser,
  enableUser,
  endUserSessions,
  findUser,
  resolveUser,
  searchUserPage,
  setRole,
  ADMIN_SEARCH_MAX,
  type Actor,
} from "~/auth/accounts/admin.server";
import { type AuthRequest, BadRequestError, ensureCsrfToken, getConfig, headersWith, isRecentAuth, listSessions, readBody, reauthUrl, requireSession, verifyCsrf } from "~/auth/core";
import { requireRecentAuth, requireRole } from "~/auth";
import { wantsJsonRedirect } from "~/auth/core/respond.server";
import { ID_PATTERN } from "~/auth/core/ids";
import { sendPasswordResetFor } from "~/auth/passwords";
import { accountDeletedHooks, findProvider, methodLabel } from "~/auth/signin";
import { sessionSignInKind, turnOffSecondFactorFor } from "~/auth/two-factor";
import { t } from "~/i18n/t.server";
import { visibleName } from "~/auth/core/display-text";
import { jsonResponse } from "~/auth/core/respond.server";
import { CONFIRMATION_REQUIRED, confirmationWord, isConfirmationWord, LAST_ADMIN, LAST_OWNER } from "./account-lifecycle.server";
import { isRole, roleNames, type Role } from "~/auth/accounts/roles.server";
import { addClientAs, ClientInputError, listClients, removeClientAs } from "~/auth/provider";

/** How many of a user's events their page shows. */
export const ADMIN_USER_EVENTS = 100;

/** The outcomes a user's page announces after an action (?done=…), in the page's words. */
export const ADMIN_DONE = ["disabled", "enabled", "sessions-ended", "reset-sent", "second-factor-off", "role-changed", "unchanged"] as const;
export type AdminDone = (typeof ADMIN_DONE)[number];
/** What the user list announces after a deletion (?done=deleted): the user's page is gone. */
const LIST_DONE = "deleted" as const;

type AdminUrl = { page: "users" } | { page: "user"; id: string } | { page: "clients" };
/** The OAuth provider's apps (docs/features/provider.md), while the provider is on. */
export const ADMIN_CLIENTS_PATH = "/admin/oauth-clients";

/** Whether a URL is one of /admin's; everything else here is the ordinary 404. */
export function isAdminUrl(url: URL): boolean {
  const path = url.pathname.replace(/\.data$/, "");
  return path === "/admin" || path.startsWith("/admin/");
}

/** Which /admin page a URL is (with JavaScript React Router asks for `<path>.data`), or null. */
function adminPage(url: URL): AdminUrl | null {
  const path = url.pathname.replace(/\.data$/, "").replace(/\/$/, "");
  if (path === "/admin" || path === "/admin/users") return { page: "users" };
  if (path === ADMIN_CLIENTS_PATH) return getConfig().provider ? { page: "clients" } : null;
  const user = /^\/admin\/users\/([^/]+)$/.exec(path);
  if (user && ID_PATTERN.test(user[1]!)) return { page: "user", id: user[1]! };
  return null;
}

/** The unknown-URL answer (routes/not-found.tsx throws the same). */
function notFound(): never {
  throw data("Not found", { status: 404 });
}

/** /admin's pages show users, their sessions and events: no cache may keep a copy (not-found.tsx passes it on). */
function noStore(headers: Headers): Headers {
  headers.set("Cache-Control", "private, no-store");
  return headers;
}

export function userPagePath(id: string): string {
  return `/admin/users/${encodeURIComponent(id)}`;
}

/**
 * The console shows every user, their sessions and events: an old copy of an admin's cookie must
 * not read it (issue 31, ADR 110). Its pages need a sign-in within AUTH_ADMIN_REAUTH_MAX_AGE (the
 * actions, the smaller of it and AUTH_REAUTH_MAX_AGE); past it, the thrown 403 {"error":"ReauthRequired","url"} of
 * requireRecentAuth, whose way back is the page (never its `.data` twin).
 */
/**
 * The signed-in admin (their role read now), or the very 404 an unknown URL gets — signed out, a
 * plain user, a user whose role was just taken away — so /admin does not show that it exists (ADR 077).
 */
async function requireAdmin(request: Request): Promise<{ userId: string; headers: Headers }> {
  try {
    const { user, headers } = await requireRole(request, "admin", { hide: true });
    return { userId: user.id, headers };
  } catch (thrown) {
    // The catch-all route's own 404, byte for byte the page of an unknown URL.
    if (thrown instanceof Response && thrown.status === 404) notFound();
    throw thrown;
  }
}

function requireRecentAdmin(request: Request) {
  return requireRecentAuth(request, { maxAge: getConfig().adminReauthMaxAge });
}

/**
 * The actions' window: the smaller of AUTH_REAUTH_MAX_AGE and AUTH_ADMIN_REAUTH_MAX_AGE, so a cookie
 * the console's pages refuse cannot act on it either (ADR 110).
 */
function adminActionMaxAge(): number {
  const config = getConfig();
  return Math.min(config.reauthMaxAge, config.adminReauthMaxAge);
}

function requireRecentAdminAction(request: Request) {
  return requireRecentAuth(request, { maxAge: adminActionMaxAge() });
}

export async function adminLoader(request: Request) {
  const admin = await requireAdmin(request);
  const url = new URL(request.url);
  const page = adminPage(url);
  if (!page) notFound();
  await requireRecentAdmin(request);
  if (page.page === "clients") return clientsPage(request, admin.headers);
  if (page.page === "users") {
    const query = (url.searchParams.get("q") ?? "").slice(0, ADMIN_SEARCH_MAX);
    const afterParam = url.searchParams.get("after");
    const after = afterParam && ID_PATTERN.test(afterParam) ? afterParam : null;
    const found = await searchUserPage(query, after);
    const done = url.searchParams.get("done") === LIST_DONE ? LIST_DONE : null;
    // Names as the operator must see them: nothing hidden or reordered (core/display-text.ts).
    const users = found.users.map((u) => ({ ...u, name: visibleName(u.name) }));
    const clientsUrl = getConfig().provider ? ADMIN_CLIENTS_PATH : null;
    return data({ page: "users" as const, query, after, done, ...found, users, clientsUrl }, { headers: noStore(admin.headers) });
  }
  const { ar, session } = await requireSession(request, { roll: false });
  const user = await findUser({ id: page.id });
  if (!user) notFound();
  const csrf = ensureCsrfToken(ar);
  const [sessions, events] = await Promise.all([listSessions(user.id, null), recentEvents(user.id, ADMIN_USER_EVENTS, "operator")]);
  const methodName = (id: string | null) => methodLabel(ar.config, id);
  const methodType = (id: string | null) => (id ? (findProvider(ar.config, id)?.type ?? "oauth") : null);
  const done = url.searchParams.get("done");
  const headers = noStore(headersWith([csrf.setCookie]));
  admin.headers.forEach((value, name) => headers.append(name, value));
  return data(
    {
      page: "user" as const,
      csrfToken: csrf.token,
      // `user`, `admin` and the app's own roles (app/auth.config.ts), for the role control.
      roles: roleNames() as readonly Role[],
      self: user.id === admin.userId,
      deleteWord: confirmationWord(),
      recentAuth: { recent: await isRecentAuth(ar, session, { maxAge: adminActionMaxAge() }), url: reauthUrl(ar, userPagePath(user.id)) },
      done: (ADMIN_DONE as readonly string[]).includes(done ?? "") ? (done as AdminDone) : null,
      user: {
        id: user.id,
        email: user.email,
        name: visibleName(user.name),
        role: user.role,
        disabledAt: user.disabledAt?.toISOString() ?? null,
        createdAt: user.createdAt.toISOString(),
        emailVerified: user.emailVerified !== null,
        waysIn: user.waysIn,
        secondFactor: user.secondFactor,
      },
      sessions: sessions.map((s) => ({
        id: s.id,
        kind: s.kind,
        userAgent: s.userAgent,
        method: methodName(s.method),
        methodType: s.method ? sessionSignInKind(methodType(s.method)!, s.factors) : null,
        createdAt: s.createdAt.toISOString(),
        lastUsedAt: s.lastUsedAt.toISOString(),
      })),
      events: events.map((e) => ({ id: e.id, type: e.type, at: e.at.toISOString(), ip: e.ip, userAgent: e.userAgent, method: methodName(e.provider), methodType: e.provider ? sessionSignInKind(methodType(e.provider)!, e.factors) : null })),
    },
    { headers },
  );
}

/**
 * A JSON client (`X-Auth-Return-Redirect: 1`, `json=true`) of a signed-in admin past the window
 * gets the 403 JSON itself, as /account's do, not the page drawn around it; a POST only with its
 * CSRF token right (without it the action refuses it first). Null: the route answers as usual —
 * everyone but an admin gets the unknown-URL page.
 */
export async function adminReauthJson(request: Request): Promise<Response | null> {
  const post = request.method.toUpperCase() === "POST";
  let body: Record<string, unknown> = {};
  if (post) {
    try {
      body = await readBody(request);
    } catch {
      return null;
    }
  }
  if (!wantsJsonRedirect(request, body)) return null;
  try {
    await requireAdmin(request);
    if (post) {
      const { ar } = await requireSession(request, { roll: false });
      if (!verifyCsrf(ar, body.csrfToken)) return null;
      await requireRecentAdminAction(request);
    } else {
      await requireRecentAdmin(request);
    }
  } catch (thrown) {
    return thrown instanceof Response && thrown.status === 403 ? thrown : null;
  }
  return null;
}

const Intent = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("disable") }),
  z.object({ intent: z.literal("enable") }),
  z.object({ intent: z.literal("end-sessions") }),
  z.object({ intent: z.literal("send-reset") }),
  z.object({ intent: z.literal("second-factor-off") }),
  z.object({ intent: z.literal("set-role"), role: z.string().refine(isRole) }),
  // The word is checked below, with the page's answer for a wrong one.
  z.object({ intent: z.literal("delete"), confirm: z.unknown().optional() }),
]);

/**
 * What an action came to, for either shape (ADR 085; issue 31): the form post gets a redirect to
 * the page that says so, or the page again with the refusal; a JSON client (X-Auth-Return-Redirect:
 * 1 or json=true) gets `{ok: true, done, url}` or `{error, message}` with the same status, as
 * /account's actions answer. A URL that is not an admin's, and anyone who is not an admin, still
 * get the unknown-URL page (thrown); a stale sign-in the JSON `403 {"error":"ReauthRequired","url"}`.
 */
type AdminAnswer =
  | { kind: "done"; done: AdminDone | typeof LIST_DONE | ClientsDone; location: string; headers: Headers }
  /** A client added: shown once with its secret, never redirected to (the secret is in no URL). */
  | { kind: "created"; client: { clientId: string; name: string; secret: string | null } }
  | { kind: "refused"; status: number; error: string; message: string; extra?: Record<string, unknown> };

function refused(error: string, message: string, status = 400, extra?: Record<string, unknown>): AdminAnswer {
  return { kind: "refused", status, error, message, ...(extra ? { extra } : {}) };
}

/**
 * The posted form of an admin page, checked as every admin action is: the body read (a refused one
 * answered), the CSRF token, then the admin's recent sign-in — a copy of an admin's cookie is not
 * enough (403 with the sign-in-again link otherwise; nothing is read or written before).
 */
async function adminForm(request: Request): Promise<{ ar: AuthRequest; body: Record<string, unknown> } | { answer: AdminAnswer }> {
  const { ar } = await requireSession(request, { roll: false });
  let body: Record<string, unknown>;
  try {
    body = await readBody(request);
  } catch (error) {
    const status = error instanceof BadRequestError ? error.status : 400;
    return { answer: refused("InvalidRequest", status === 400 ? t("common.unknownRequest") : (error as Error).message, status) };
  }
  if (!verifyCsrf(ar, body.csrfToken)) return { answer: refused("MissingCSRF", t("common.formExpired"), 403) };
  await requireRecentAdminAction(request);
  return { ar, body };
}

async function runAdminAction(request: Request): Promise<AdminAnswer> {
  const admin = await requireAdmin(request);
  const page = adminPage(new URL(request.url));
  if (page?.page === "clients") return runClientsAction(request, admin);
  if (!page || page.page !== "user") notFound();
  const form = await adminForm(request);
  if ("answer" in form) return form.answer;
  const { ar, body } = form;
  const parsed = Intent.safeParse(body);
  if (!parsed.success) return refused("InvalidRequest", t("common.unknownRequest"));
  const target = await resolveUser({ id: page.id });
  if (!target) notFound();
  const actor: Actor = { source: "admin", adminId: admin.userId, ...eventSource(ar) };
  const who = { id: target.id };
  const done = (outcome: AdminDone): AdminAnswer => ({ kind: "done", done: outcome, location: `${userPagePath(target.id)}?done=${outcome}`, headers: admin.headers });

  switch (parsed.data.intent) {
    case "disable": {
      // An admin who disabled their own account would lock themselves out of this console.
      if (target.id === admin.userId) return refused("Refused", t("admin.refused.self"));
      const result = await disableUser(who, actor);
      return done(result.ok && result.changed ? "disabled" : "unchanged");
    }
    case "enable": {
      const result = await enableUser(who, actor);
      return done(result.ok && result.changed ? "enabled" : "unchanged");
    }
    case "end-sessions":
      await endUserSessions(who, actor);
      return done("sessions-ended");
    case "send-reset": {
      const result = await sendPasswordResetFor(ar, who, actor);
      if (result.ok) return done("reset-sent");
      if (result.reason === "not-found") notFound();
      return result.reason === "no-address" ? refused("NoAddress", t("admin.refused.noAddress")) : refused("EmailSignin", t("admin.refused.notSent"), 503);
    }
    case "second-factor-off": {
      const result = await turnOffSecondFactorFor(ar, target.id, actor);
      if (result.refused) return refused("Refused", t("admin.refused.shortPassword", { min: result.min }));
      return done(result.changed ? "second-factor-off" : "unchanged");
    }
    case "set-role": {
      const result = await setRole(who, parsed.data.role, actor);
      if (result.ok) return done(result.changed ? "role-changed" : "unchanged");
      if (result.reason === "last-admin") return refused(LAST_ADMIN, t("admin.refused.lastAdmin"), 409);
      notFound();
    }
    case "delete": {
      // An admin deletes their own account from /account, where it signs them out; here it
      // would pull the console from under them.
      if (target.id === admin.userId) return refused("Refused", t("admin.refused.deleteSelf"));
      if (!isConfirmationWord(parsed.data.confirm)) {
        return refused(CONFIRMATION_REQUIRED, t("admin.delete.wrongWord", { word: confirmationWord() }), 400, { word: confirmationWord() });
      }
      const result = await deleteAccount(target.id, actor, { hooks: accountDeletedHooks, ar });
      if (!result.ok && result.reason === "last-admin") return refused(LAST_ADMIN, t("admin.refused.lastAdminDelete"), 409);
      if (!result.ok && result.reason === "last-owner") return refused(LAST_OWNER, t("org.refused.lastOwnerDeleteByAdmin"), 409);
      if (!result.ok) notFound();
      return { kind: "done", done: LIST_DONE, location: `/admin?done=${LIST_DONE}`, headers: admin.headers };
    }
  }
}

/** The form post: a redirect to the page that says what was done, or the page with the refusal. */
export async function adminAction(request: Request) {
  const answer = await runAdminAction(request);
  if (answer.kind === "done") return redirect(answer.location, { headers: answer.headers });
  if (answer.kind === "created") return data({ created: answer.client });
  return data({ formError: answer.message }, { status: answer.status });
}

/** A JSON client's POST (route middleware, before the page would render): `{ok, done, url}` or `{error, message}`. */
export async function adminJson(request: Request): Promise<Response> {
  const answer = await runAdminAction(request);
  if (answer.kind === "refused") return jsonResponse({ error: answer.error, message: answer.message, ...answer.extra }, { status: answer.status, noCache: true });
  if (answer.kind === "created") return jsonResponse({ ok: true, done: "client-added", ...answer.client }, { status: 201, noCache: true });
  const url = `${new URL(request.url).origin}${answer.location}`;
  return jsonResponse({ ok: true, done: answer.done, url }, { setCookies: answer.headers.getSetCookie(), noCache: true });
}

/** What the clients page announces after an action (?done=…). */
export const CLIENTS_DONE = ["client-removed"] as const;
type ClientsDone = (typeof CLIENTS_DONE)[number];

async function clientsPage(request: Request, adminHeaders: Headers) {
  const { ar } = await requireSession(request, { roll: false });
  const csrf = ensureCsrfToken(ar);
  const clients = await listClients();
  const done = new URL(request.url).searchParams.get("done");
  const headers = noStore(headersWith([csrf.setCookie]));
  adminHeaders.forEach((value, name) => headers.append(name, value));
  return data(
    {
      page: "clients" as const,
      csrfToken: csrf.token,
      done: (CLIENTS_DONE as readonly string[]).includes(done ?? "") ? (done as ClientsDone) : null,
      clients: clients.map((c) => ({ ...c, createdAt: c.createdAt.toISOString() })),
    },
    { headers },
  );
}

const ClientIntent = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("client-add"),
    name: z.string(),
    // One redirect URI a line.
    redirectUris: z.string().max(8_000),
    public: z.unknown().optional(),
    firstParty: z.unknown().optional(),
  }),
  z.object({ intent: z.literal("client-remove"), clientId: z.string().min(1).max(2_048) }),
]);

/** The clients page's actions: the operations `npm run oauth:client:add|remove` run, as this admin. */
async function runClientsAction(request: Request, admin: Awaited<ReturnType<typeof requireAdmin>>): Promise<AdminAnswer> {
  const form = await adminForm(request);
  if ("answer" in form) return form.answer;
  const { ar, body } = form;
  const parsed = ClientIntent.safeParse(body);
  if (!parsed.success) return refused("InvalidRequest", t("common.unknownRequest"));
  const actor: Actor = { source: "admin", adminId: admin.userId, ...eventSource(ar) };
  if (parsed.data.intent === "client-remove") {
    if (!(await removeClientAs(actor, parsed.data.clientId))) notFound();
    return { kind: "done", done: "client-removed", location: `${ADMIN_CLIENTS_PATH}?done=client-removed`, headers: admin.headers };
  }
  const input = parsed.data;
  const checked = (value: unknown) => value === "on" || value === "true" || value === true;
  try {
    const { client, secret } = await addClientAs(actor, {
      name: input.name,
      redirectUris: input.redirectUris.split(/\r?\n/).map((u) => u.trim()).filter(Boolean),
      public: checked(input.public),
      firstParty: checked(input.firstParty),
    });
    return { kind: "created", client: { clientId: client.clientId, name: client.name, secret } };
  } catch (error) {
    if (error instanceof ClientInputError) return refused("InvalidClient", t("admin.clients.invalid", { reason: error.message }));
    throw error;
  }
}
