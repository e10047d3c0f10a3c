// Account administration (contract §18): the operations `npm run user:*` runs today and the /admin
// pages will call later — the same functions, so the rules live here once. Each takes the actor
// (the command line, or later a signed-in admin) and writes an audit event naming it.
import { db, dbProvider } from "../../db/client.server";
import { normalizeEmailAddress } from "../core/email-address";
import { recordEvent } from "./audit.server";
import { isRole, type Role } from "./roles.server";

/** Who asks: the operator's command line, or (later) an admin through /admin. */
export type Actor = { source: "cli" } | { source: "admin"; adminId: string; ip: string | null; userAgent: string | null };

/** Transaction-scoped advisory lock: role changes one at a time, so two demotions cannot both pass the last-admin check. */
const PG_ROLE_LOCK_KEY = 7_707_077;

/** The audit fields an actor adds to an event about `userId`. */
function eventFields(actor: Actor, userId: string, detail: Record<string, unknown>) {
  if (actor.source === "cli") return { userId, detail: { ...detail, source: "cli" } };
  return { userId, ip: actor.ip, userAgent: actor.userAgent, detail: { ...detail, source: "admin", adminId: actor.adminId } };
}

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
