// /admin, the operator's console (contract section 18, issue 21, ADR 085): the user list, one
// user's page and its actions. The pages are answered by the catch-all route (not-found.tsx), so
// that everyone but a signed-in admin gets the unknown-URL page byte for byte: a route of its own
// would name itself in that page. Each action is the operation `npm run user:*` runs (same
// functions), behind requireAdmin, the CSRF token, the origin check (root middleware), the admin's
// recent sign-in, and writes an audit event naming the admin.
import { data, redirect } from "react-router";
import { z } from "zod";
import { deleteAccount, eventSource, recentEvents } from "~/auth/accounts";
import {
  disableUser,
  enableUser,
  endUserSessions,
  findUser,
  isLastAdmin,
  resolveUser,
  searchUserPage,
  setRole,
  ADMIN_SEARCH_MAX,
  type Actor,
} from "~/auth/accounts/admin.server";
import { BadRequestError, ensureCsrfToken, headersWith, isRecentAuth, listSessions, readBody, reauthUrl, requireRecentAuth, requireSession, verifyCsrf } from "~/auth/core";
import { ID_PATTERN } from "~/auth/core/ids";
import { sendPasswordResetFor } from "~/auth/passwords";
import { accountDeletedHooks, findProvider } from "~/auth/signin";
import { turnOffSecondFactorFor } from "~/auth/two-factor";
import { t } from "~/i18n/t.server";
import { confirmationWord, isConfirmationWord } from "./account-lifecycle.server";
import { requireAdmin } from "./admin-access.server";

/** How many of a user's events their page shows. */
export const ADMIN_USER_EVENTS = 100;

/** The outcomes a user's page announces after an action (?done=…), in the page's words. */
export const ADMIN_DONE = ["disabled", "enabled", "sessions-ended", "reset-sent", "second-factor-off", "role-changed", "unchanged"] as const;
export type AdminDone = (typeof ADMIN_DONE)[number];
/** What the user list announces after a deletion (?done=deleted): the user's page is gone. */
const LIST_DONE = "deleted" as const;

type AdminUrl = { page: "users" } | { page: "user"; id: string };

/** Whether a URL is one of /admin's; everything else here is the ordinary 404. */
export function isAdminUrl(url: URL): boolean {
  const path = url.pathname.replace(/\.data$/, "");
  return path === "/admin" || path.startsWith("/admin/");
}

/** Which /admin page a URL is (with JavaScript React Router asks for `<path>.data`), or null. */
function adminPage(url: URL): AdminUrl | null {
  const path = url.pathname.replace(/\.data$/, "").replace(/\/$/, "");
  if (path === "/admin" || path === "/admin/users") return { page: "users" };
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

export async function adminLoader(request: Request) {
  const admin = await requireAdmin(request);
  const url = new URL(request.url);
  const page = adminPage(url);
  if (!page) notFound();
  if (page.page === "users") {
    const query = (url.searchParams.get("q") ?? "").slice(0, ADMIN_SEARCH_MAX);
    const afterParam = url.searchParams.get("after");
    const after = afterParam && ID_PATTERN.test(afterParam) ? afterParam : null;
    const found = await searchUserPage(query, after);
    const done = url.searchParams.get("done") === LIST_DONE ? LIST_DONE : null;
    return data({ page: "users" as const, query, after, done, ...found }, { headers: noStore(admin.headers) });
  }
  const { ar, session } = await requireSession(request, { roll: false });
  const user = await findUser({ id: page.id });
  if (!user) notFound();
  const csrf = ensureCsrfToken(ar);
  const [sessions, events] = await Promise.all([listSessions(user.id, null), recentEvents(user.id, ADMIN_USER_EVENTS, "operator")]);
  const methodName = (id: string | null) => (id ? (findProvider(ar.config, id)?.name ?? id) : null);
  const methodType = (id: string | null) => (id ? (findProvider(ar.config, id)?.type ?? "oauth") : null);
  const done = url.searchParams.get("done");
  const headers = noStore(headersWith([csrf.setCookie]));
  admin.headers.forEach((value, name) => headers.append(name, value));
  return data(
    {
      page: "user" as const,
      csrfToken: csrf.token,
      self: user.id === admin.userId,
      deleteWord: confirmationWord(),
      recentAuth: { recent: await isRecentAuth(ar, session), url: reauthUrl(ar, userPagePath(user.id)) },
      done: (ADMIN_DONE as readonly string[]).includes(done ?? "") ? (done as AdminDone) : null,
      user: {
        id: user.id,
        email: user.email,
        name: user.name,
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
        methodType: methodType(s.method),
        createdAt: s.createdAt.toISOString(),
        lastUsedAt: s.lastUsedAt.toISOString(),
      })),
      events: events.map((e) => ({ id: e.id, type: e.type, at: e.at.toISOString(), ip: e.ip, userAgent: e.userAgent, method: methodName(e.provider), methodType: methodType(e.provider) })),
    },
    { headers },
  );
}

const Intent = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("disable") }),
  z.object({ intent: z.literal("enable") }),
  z.object({ intent: z.literal("end-sessions") }),
  z.object({ intent: z.literal("send-reset") }),
  z.object({ intent: z.literal("second-factor-off") }),
  z.object({ intent: z.literal("set-role"), role: z.enum(["user", "admin"]) }),
  // The word is checked below, with the page's answer for a wrong one.
  z.object({ intent: z.literal("delete"), confirm: z.unknown().optional() }),
]);

function refused(message: string, status = 400) {
  return data({ formError: message }, { status });
}

export async function adminAction(request: Request) {
  const admin = await requireAdmin(request);
  const page = adminPage(new URL(request.url));
  if (!page || page.page !== "user") notFound();
  const { ar } = await requireSession(request, { roll: false });
  let body: Record<string, unknown>;
  try {
    body = await readBody(request);
  } catch (error) {
    const status = error instanceof BadRequestError ? error.status : 400;
    return refused(status === 400 ? t("common.unknownRequest") : (error as Error).message, status);
  }
  if (!verifyCsrf(ar, body.csrfToken)) return refused(t("common.formExpired"), 403);
  // A copy of an admin's cookie is not enough: each action needs the admin's recent sign-in (403
  // with the sign-in-again link otherwise; nothing is read or written before).
  await requireRecentAuth(request);
  const parsed = Intent.safeParse(body);
  if (!parsed.success) return refused(t("common.unknownRequest"));
  const target = await resolveUser({ id: page.id });
  if (!target) notFound();
  const actor: Actor = { source: "admin", adminId: admin.userId, ...eventSource(ar) };
  const who = { id: target.id };
  const done = (outcome: AdminDone) => redirect(`${userPagePath(target.id)}?done=${outcome}`, { headers: admin.headers });

  switch (parsed.data.intent) {
    case "disable": {
      // An admin who disabled their own account would lock themselves out of this console.
      if (target.id === admin.userId) return refused(t("admin.refused.self"));
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
      return refused(result.reason === "no-address" ? t("admin.refused.noAddress") : t("admin.refused.notSent"), result.reason === "no-address" ? 400 : 503);
    }
    case "second-factor-off": {
      const result = await turnOffSecondFactorFor(ar, target.id, actor);
      return done(result.changed ? "second-factor-off" : "unchanged");
    }
    case "set-role": {
      const result = await setRole(who, parsed.data.role, actor);
      if (result.ok) return done(result.changed ? "role-changed" : "unchanged");
      if (result.reason === "last-admin") return refused(t("admin.refused.lastAdmin"), 409);
      notFound();
    }
    case "delete": {
      // An admin deletes their own account from /account, where it signs them out; here it
      // would pull the console from under them.
      if (target.id === admin.userId) return refused(t("admin.refused.deleteSelf"));
      if (!isConfirmationWord(parsed.data.confirm)) return refused(t("admin.delete.wrongWord", { word: confirmationWord() }));
      if (await isLastAdmin(target.id)) return refused(t("admin.refused.lastAdminDelete"), 409);
      const result = await deleteAccount(target.id, actor, { hooks: accountDeletedHooks, ar });
      if (!result.ok) notFound();
      return redirect(`/admin?done=${LIST_DONE}`, { headers: admin.headers });
    }
  }
}
