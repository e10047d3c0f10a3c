// Account administration (contract §18): the operations `npm run user:*` runs today and the /admin
// pages will call later — the same functions, so the rules live here once. Each takes the actor
// (the command line, or later a signed-in admin) and writes an audit event naming it.
import { db, dbProvider } from "../../db/client.server";
import { normalizeEmailAddress } from "../core/email-address";
import { announceUserDisabled } from "../core/revocation.server";
import { revokeUserSessions } from "../core/session.server";
import { recordEvent } from "./audit.server";
import { actorEventFields as eventFields, type Actor } from "./actor";
import { isRole, type Role } from "./roles.server";

export type { Actor } from "./actor";

/** Transaction-scoped advisory lock: role changes one at a time, so two demotions cannot both pass the last-admin check. */
const PG_ROLE_LOCK_KEY = 7_707_077;

/** An address as users type it, normalised as sign-in does; null when it is no address. */
export function addressOf(input: string): string | null {
  const checked = normalizeEmailAddress(input);
  return checked.ok ? checked.address : null;
}

export type SetRoleResult =
  | { ok: true; userId: string; email: string | null; role: Role; previous: Role; changed: boolean }
  | { ok: false; reason: "not-found" | "last-admin" | "bad-role" };

/**
 * Gives the user with this address `role`. Refuses to make the last admin a user (there would be
 * nobody to reach /admin). An unchanged role writes nothing.
 */
export async function setRole(email: string, role: string, actor: Actor): Promise<SetRoleResult> {
  if (!isRole(role)) return { ok: false, reason: "bad-role" };
  const address = addressOf(email);
  if (!address) return { ok: false, reason: "not-found" };
  const result = await db().$transaction(async (tx) => {
    if (dbProvider() === "postgres") await tx.$queryRawUnsafe("SELECT 1 AS locked FROM pg_advisory_xact_lock($1)", PG_ROLE_LOCK_KEY);
    const user = await tx.user.findUnique({ where: { email: address }, select: { id: true, email: true, role: true } });
    if (!user) return { ok: false as const, reason: "not-found" as const };
    const previous: Role = isRole(user.role) ? user.role : "user";
    if (previous === role) return { ok: true as const, userId: user.id, email: user.email, role, previous, changed: false };
    if (previous === "admin" && (await tx.user.count({ where: { role: "admin", id: { not: user.id } } })) === 0) {
      return { ok: false as const, reason: "last-admin" as const };
    }
    await tx.user.update({ where: { id: user.id }, data: { role } });
    return { ok: true as const, userId: user.id, email: user.email, role, previous, changed: true };
  });
  if (result.ok && result.changed) await recordEvent("role-changed", eventFields(actor, result.userId, { role, previous: result.previous }));
  return result;
}

type UserRef = { id: string; email: string | null };

async function userByEmail(email: string): Promise<UserRef & { disabledAt: Date | null } | null> {
  const address = addressOf(email);
  if (!address) return null;
  return db().user.findUnique({ where: { email: address }, select: { id: true, email: true, disabledAt: true } });
}

export type ChangeResult = { ok: true; userId: string; email: string | null; changed: boolean; sessionsEnded: number } | { ok: false; reason: "not-found" };

/**
 * Disables the user (ADR 078): every sign-in method refuses them from now on, with its answer for
 * wrong credentials, and every session they have ends on every instance — database rows deleted
 * with a revocation note, jwt sessions revoked and a cut-off for their cookies, announced by
 * NOTIFY (PostgreSQL) as `sessions`, `cutoff` and `user-disabled`. Disabling a disabled user
 * changes nothing more than ending any session again.
 */
export async function disableUser(email: string, actor: Actor): Promise<ChangeResult> {
  const user = await userByEmail(email);
  if (!user) return { ok: false, reason: "not-found" };
  const changed = user.disabledAt === null;
  // Written first: a sign-in that passed its check a moment ago cannot roll or refresh its cookie
  // past this (revocation.server.ts endedInDatabase), and none can start.
  if (changed) await db().user.update({ where: { id: user.id }, data: { disabledAt: new Date() } });
  const sessionsEnded = await revokeUserSessions(user.id);
  announceUserDisabled(user.id);
  if (changed) await recordEvent("user-disabled", eventFields(actor, user.id, { count: sessionsEnded }));
  return { ok: true, userId: user.id, email: user.email, changed, sessionsEnded };
}

/** Enables the user again: sign-in works again; ended sessions stay ended. */
export async function enableUser(email: string, actor: Actor): Promise<ChangeResult> {
  const user = await userByEmail(email);
  if (!user) return { ok: false, reason: "not-found" };
  const changed = user.disabledAt !== null;
  if (changed) {
    await db().user.update({ where: { id: user.id }, data: { disabledAt: null } });
    await recordEvent("user-enabled", eventFields(actor, user.id, {}));
  }
  return { ok: true, userId: user.id, email: user.email, changed, sessionsEnded: 0 };
}

/** Ends every session of the user on every instance ("sign out everywhere", by an operator). */
export async function endUserSessions(email: string, actor: Actor): Promise<ChangeResult> {
  const user = await userByEmail(email);
  if (!user) return { ok: false, reason: "not-found" };
  const sessionsEnded = await revokeUserSessions(user.id);
  await recordEvent("sessions-ended", eventFields(actor, user.id, { count: sessionsEnded }));
  return { ok: true, userId: user.id, email: user.email, changed: sessionsEnded > 0, sessionsEnded };
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
export async function findUser(email: string, now = new Date()): Promise<UserSummary | null> {
  const address = addressOf(email);
  if (!address) return null;
  const user = await db().user.findUnique({
    where: { email: address },
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

/** Users a page holds in a search. */
export const USERS_PER_PAGE = 20;

export type UserListing = { users: { email: string | null; name: string | null; role: string; disabled: boolean }[]; page: number; total: number; pages: number };

/** Users whose address or name contains `query` (any case), by address, `USERS_PER_PAGE` a page from 1. */
export async function searchUsers(query: string, page = 1): Promise<UserListing> {
  const term = query.trim().slice(0, 254);
  // SQLite's LIKE ignores ASCII case by itself and knows no `mode`; PostgreSQL needs it.
  const contains = dbProvider() === "postgres" ? { contains: term, mode: "insensitive" as const } : { contains: term };
  const where = term ? { OR: [{ email: contains }, { name: contains }] } : {};
  const [total, rows] = await Promise.all([
    db().user.count({ where }),
    db().user.findMany({
      where,
      orderBy: [{ email: "asc" }, { id: "asc" }],
      skip: (page - 1) * USERS_PER_PAGE,
      take: USERS_PER_PAGE,
      select: { email: true, name: true, role: true, disabledAt: true },
    }),
  ]);
  return {
    users: rows.map((r) => ({ email: r.email, name: r.name, role: r.role, disabled: r.disabledAt !== null })),
    page,
    total,
    pages: Math.max(1, Math.ceil(total / USERS_PER_PAGE)),
  };
}
