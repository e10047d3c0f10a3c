// Account administration: the operations `npm run user:*` runs today and the /admin
// pages will call later — the same functions, so the rules live here once. Each takes the actor
// (the command line, or later a signed-in admin) and writes an audit event naming it.
import { db, dbProvider, rawEmpty, rawSql } from "../../db/client.server";
import { foldForSearch } from "../../db/name-search";
import { normalizeEmailAddress } from "../core/email-address";
import { announceUserDisabled } from "../core/revocation.server";
import { revokeAllSessions, revokeUserSessions } from "../core/session.server";
import { recordEvent } from "./audit.server";
import { actorEventFields, actorEventFields as eventFields, type Actor } from "./actor";
import { holdRoleLock, isLastAdminIn, isRole, type Role } from "./roles.server";

export type { Actor } from "./actor";

/** An address as users type it, normalised as sign-in does; null when it is no address. */
export function addressOf(input: string): string | null {
  const checked = normalizeEmailAddress(input);
  return checked.ok ? checked.address : null;
}

/**
 * Whom an operation is about: an address as typed at the command line, or a user id from an
 * /admin URL. The one lookup both use, so a page and a command reach the same row the same way.
 */
export type UserKey = string | { id: string };

function whereOf(who: UserKey): { email: string } | { id: string } | null {
  if (typeof who !== "string") return { id: who.id };
  const address = addressOf(who);
  return address ? { email: address } : null;
}

export type SetRoleResult =
  | { ok: true; userId: string; email: string | null; role: Role; previous: Role; changed: boolean }
  | { ok: false; reason: "not-found" | "last-admin" | "bad-role" };

/**
 * Gives the user with this address `role`. Refuses to make the last admin a user (there would be
 * nobody to reach /admin). An unchanged role writes nothing.
 */
export async function setRole(email: UserKey, role: string, actor: Actor): Promise<SetRoleResult> {
  if (!isRole(role)) return { ok: false, reason: "bad-role" };
  const where = whereOf(email);
  if (!where) return { ok: false, reason: "not-found" };
  const result = await db().$transaction(async (tx) => {
    const found = await tx.user.findUnique({ where, select: { id: true } });
    if (!found) return { ok: false as const, reason: "not-found" as const };
    // One lock with every deletion and demotion: the check below and the change are one step.
    await holdRoleLock(tx, found.id);
    const user = await tx.user.findUnique({ where: { id: found.id }, select: { id: true, email: true, role: true } });
    if (!user) return { ok: false as const, reason: "not-found" as const };
    const previous: Role = isRole(user.role) ? user.role : "user";
    if (previous === role) return { ok: true as const, userId: user.id, email: user.email, role, previous, changed: false };
    if (previous === "admin" && (await isLastAdminIn(tx, user.id))) return { ok: false as const, reason: "last-admin" as const };
    await tx.user.update({ where: { id: user.id }, data: { role } });
    return { ok: true as const, userId: user.id, email: user.email, role, previous, changed: true };
  });
  if (result.ok && result.changed) await recordEvent("role-changed", eventFields(actor, result.userId, { role, previous: result.previous }));
  return result;
}

type UserRef = { id: string; email: string | null };

/** The user an operation is about (id and address), or null when there is none. */
export async function resolveUser(who: UserKey): Promise<UserRef | null> {
  const where = whereOf(who);
  return where ? db().user.findUnique({ where, select: { id: true, email: true } }) : null;
}

async function userByEmail(email: UserKey): Promise<UserRef & { disabledAt: Date | null; disabledBy: string | null } | null> {
  const where = whereOf(email);
  if (!where) return null;
  return db().user.findUnique({ where, select: { id: true, email: true, disabledAt: true, disabledBy: true } });
}

export type ChangeResult = { ok: true; userId: string; email: string | null; changed: boolean; sessionsEnded: number } | { ok: false; reason: "not-found" | "disabled-by-other" };

/**
 * Who disabled an account (User.disabledBy, ADR 175): "scim:<organizationId>" for an
 * organization's directory, "admin" for the command line and /admin. A directory enables only what
 * its own organization's directory disabled; an operator enables anything.
 */
function disablerOf(actor: Actor): string {
  return actor.source === "scim" ? `scim:${actor.organizationId}` : "admin";
}

/** Whether the account is disabled by someone other than this organization's directory (an operator, or another organization's). */
export async function disabledByOtherThanScimOf(userId: string, organizationId: string): Promise<boolean> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { disabledAt: true, disabledBy: true } });
  return user?.disabledAt != null && user.disabledBy !== `scim:${organizationId}`;
}

/**
 * Disables the user (ADR 078): every sign-in method refuses them from now on, with its answer for
 * wrong credentials, and every session they have ends on every instance — database rows deleted
 * with a revocation note, jwt sessions revoked and a cut-off for their cookies, announced by
 * NOTIFY (PostgreSQL) as `sessions`, `cutoff` and `user-disabled`. Disabling a disabled user
 * changes nothing more than ending any session again.
 */
export async function disableUser(email: UserKey, actor: Actor): Promise<ChangeResult> {
  const user = await userByEmail(email);
  if (!user) return { ok: false, reason: "not-found" };
  const changed = user.disabledAt === null;
  // Written first: a sign-in that passed its check a moment ago cannot roll or refresh its cookie
  // past this (revocation.server.ts endedInDatabase), and none can start.
  if (changed) await db().user.update({ where: { id: user.id }, data: { disabledAt: new Date(), disabledBy: disablerOf(actor) } });
  const sessionsEnded = await revokeUserSessions(user.id);
  announceUserDisabled(user.id);
  if (changed) await recordEvent("user-disabled", eventFields(actor, user.id, { count: sessionsEnded }));
  return { ok: true, userId: user.id, email: user.email, changed, sessionsEnded };
}

/**
 * Enables the user again: sign-in works again; ended sessions stay ended. An organization's
 * directory (SCIM) enables only an account its own directory disabled (ADR 175): never one an
 * operator disabled (null on rows from before the column counts as an operator), nor another
 * organization's.
 */
export async function enableUser(email: UserKey, actor: Actor): Promise<ChangeResult> {
  const user = await userByEmail(email);
  if (!user) return { ok: false, reason: "not-found" };
  const changed = user.disabledAt !== null;
  if (changed && actor.source === "scim" && user.disabledBy !== disablerOf(actor)) return { ok: false, reason: "disabled-by-other" };
  if (changed) {
    // Conditional on who disabled it: an operator's disabling in between is never undone.
    const { count } = await db().user.updateMany({ where: { id: user.id, disabledAt: { not: null }, disabledBy: user.disabledBy }, data: { disabledAt: null, disabledBy: null } });
    if (count === 0) return { ok: false, reason: "disabled-by-other" };
    await recordEvent("user-enabled", eventFields(actor, user.id, {}));
  }
  return { ok: true, userId: user.id, email: user.email, changed, sessionsEnded: 0 };
}

/** Ends every session of the user on every instance ("sign out everywhere", by an operator). */
export async function endUserSessions(email: UserKey, actor: Actor): Promise<ChangeResult> {
  const user = await userByEmail(email);
  if (!user) return { ok: false, reason: "not-found" };
  const sessionsEnded = await revokeUserSessions(user.id);
  await recordEvent("sessions-ended", eventFields(actor, user.id, { count: sessionsEnded }));
  return { ok: true, userId: user.id, email: user.email, changed: sessionsEnded > 0, sessionsEnded };
}

/** How many sessions are open now, of every user (what endAllSessions would end). */
export async function openSessionCount(now = new Date()): Promise<number> {
  return db().session.count({ where: { revokedAt: null, expires: { gt: now } } });
}

/**
 * Ends every session of every user on every instance (ASVS 7.4.5, ADR 107): after a leak, or to
 * make everyone sign in again. Both strategies; one audit event naming the actor and the count.
 */
export async function endAllSessions(actor: Actor): Promise<{ sessionsEnded: number }> {
  const sessionsEnded = await revokeAllSessions();
  const { detail, ...fields } = actorEventFields(actor, "", { count: sessionsEnded, scope: "all" });
  await recordEvent("sessions-ended", { ...fields, userId: null, detail });
  return { sessionsEnded };
}

export type UserSummary = {
  id: string;
  email: string | null;
  name: string | null;
  role: string;
  disabledAt: Date | null;
  createdAt: Date;
  emailVerified: Date | null;
  /** Ways to sign in: "password", "email" (a verified address), provider ids, "passkey ×N"; and whether a second factor is on. */
  waysIn: string[];
  secondFactor: boolean;
  sessions: number;
};

/** One user by address, with what an operator needs to help them; null when there is none. */
export async function findUser(email: UserKey, now = new Date()): Promise<UserSummary | null> {
  const where = whereOf(email);
  if (!where) return null;
  const user = await db().user.findUnique({
    where,
    include: {
      password: { select: { userId: true } },
      accounts: { select: { provider: true } },
      twoFactor: { select: { userId: true } },
      _count: { select: { passkeys: true, sessions: { where: { expires: { gt: now }, revokedAt: null } } } },
    },
  });
  if (!user) return null;
  const waysIn = [
    ...(user.password ? ["password"] : []),
    ...(user.emailVerified ? ["email"] : []),
    ...[...new Set(user.accounts.map((a) => a.provider))].sort(),
    ...(user._count.passkeys ? [`passkey ×${user._count.passkeys}`] : []),
  ];
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    disabledAt: user.disabledAt,
    createdAt: user.createdAt,
    emailVerified: user.emailVerified,
    waysIn,
    secondFactor: user.twoFactor !== null,
    sessions: user._count.sessions,
  };
}

// ---- /admin's user list (ADR 085) ----

/** Users an /admin page lists. */
export const ADMIN_USERS_PER_PAGE = 50;
/** The longest search term read; longer input is cut. */
export const ADMIN_SEARCH_MAX = 100;

export type AdminListedUser = { id: string; email: string | null; name: string | null; role: string; disabled: boolean };
/** One page, newest first; `next` is the cursor of the following page (null on the last). */
export type AdminUserPage = { users: AdminListedUser[]; next: string | null };

/** A LIKE pattern (escape character "!", the same in both dialects) that finds `term` anywhere, its own % _ and ! taken literally. */
function containsPattern(term: string): string {
  return `%${term.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/**
 * Users whose address contains `query` (any case) or whose name does (any case, any accents:
 * "jose" finds "José"), newest first, `ADMIN_USERS_PER_PAGE` a page. Keyset paging on the id (a
 * cuid starts with its creation time): `after` is the last id of the page before, so page 1000
 * costs what page 1 costs, and no total is counted. On PostgreSQL both conditions read trigram
 * indexes (the migration user_name_search); bench/admin-search.ts measures it with 1 M users.
 */
export async function searchUserPage(query: string, after: string | null = null): Promise<AdminUserPage> {
  const term = query.trim().slice(0, ADMIN_SEARCH_MAX);
  const lower = containsPattern(term.toLowerCase());
  const folded = containsPattern(foldForSearch(term));
  // Addresses are stored in lower case (normalizeEmailAddress), accents kept: "JOSÉ" finds
  // jose@… by the folded term and josé@… by the lower-cased one.
  const matches = term
    ? rawSql`AND ("email" LIKE ${lower} ESCAPE '!' OR "email" LIKE ${folded} ESCAPE '!' OR "nameSearch" LIKE ${folded} ESCAPE '!')`
    : rawEmpty;
  const afterCursor = after ? rawSql`AND "id" < ${after}` : rawEmpty;
  const rows = await db().$queryRaw<{ id: string; email: string | null; name: string | null; role: string; disabled: number | bigint }[]>`
    SELECT "id", "email", "name", "role", CASE WHEN "disabledAt" IS NULL THEN 0 ELSE 1 END AS "disabled"
      FROM "User"
     WHERE 1 = 1 ${matches} ${afterCursor}
     ORDER BY "id" DESC
     LIMIT ${ADMIN_USERS_PER_PAGE + 1}`;
  const users = rows.slice(0, ADMIN_USERS_PER_PAGE).map((r) => ({ id: r.id, email: r.email, name: r.name, role: r.role, disabled: Number(r.disabled) === 1 }));
  return { users, next: rows.length > ADMIN_USERS_PER_PAGE ? users.at(-1)!.id : null };
}
