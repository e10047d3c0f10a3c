// The active organization of a session (docs/features/organizations.md, ADR 148). Both strategies
// keep it on the session's row (Session.organizationId: a database session's row, or the row a jwt
// cookie's `sid` names), so switching never re-issues a cookie and ending a membership needs no
// cookie to change: every read joins the row with the membership again, so a member removed on any
// instance has no organization on their very next request, whatever the strategy.
import { db } from "../../db/client.server";
import { getConfig } from "../core/config.server";
import { getSession, type CurrentSession } from "../core/session.server";
import type { AuthRequest } from "../core/request.server";
import { isOrgRole, type OrgRole } from "./roles";

export type ActiveOrganization = { id: string; slug: string; name: string; role: OrgRole; membershipId: string };

/** The session's organization while the user is still a member of it; null otherwise (or when organizations are off). */
export async function activeOrganization(session: Pick<CurrentSession, "sessionId" | "userId">): Promise<ActiveOrganization | null> {
  if (!getConfig().organizations || !session.sessionId) return null;
  const row = await db().session.findUnique({
    where: { id: session.sessionId },
    select: {
      userId: true,
      revokedAt: true,
      organization: { select: { id: true, slug: true, name: true, memberships: { where: { userId: session.userId }, select: { id: true, role: true }, take: 1 } } },
    },
  });
  const membership = row?.organization?.memberships[0];
  if (!row || row.userId !== session.userId || row.revokedAt || !row.organization || !membership || !isOrgRole(membership.role)) return null;
  return { id: row.organization.id, slug: row.organization.slug, name: row.organization.name, role: membership.role, membershipId: membership.id };
}

/** What GET /auth/session adds: `organization: { id, slug, role }` while there is one. */
export async function sessionOrganizationField(session: CurrentSession): Promise<Record<string, unknown>> {
  const active = await activeOrganization(session);
  return active ? { organization: { id: active.id, slug: active.slug, role: active.role } } : {};
}

export type SwitchResult = { ok: true; setCookies: string[]; organization: { id: string; slug: string } | null } | { ok: false; reason: "not-found" };

/**
 * Makes the organization named `slug` the session's (null or "": none). Only an organization the
 * user belongs to; any other slug is "not-found", like an unknown one. A jwt cookie minted without
 * a session row (by Auth.js) is re-issued with one first.
 */
export async function switchOrganization(ar: AuthRequest, session: CurrentSession, slug: string | null): Promise<SwitchResult> {
  let current = session;
  let setCookies: string[] = [];
  if (!current.sessionId) {
    const again = await getSession(ar, { roll: "now" });
    if (!again.session?.sessionId) return { ok: false, reason: "not-found" };
    current = again.session;
    setCookies = again.setCookies;
  }
  if (!slug) {
    await db().session.updateMany({ where: { id: current.sessionId!, userId: current.userId }, data: { organizationId: null } });
    return { ok: true, setCookies, organization: null };
  }
  const membership = await db().membership.findFirst({ where: { userId: current.userId, organization: { slug } }, select: { organization: { select: { id: true, slug: true } } } });
  if (!membership) return { ok: false, reason: "not-found" };
  await db().session.updateMany({ where: { id: current.sessionId!, userId: current.userId }, data: { organizationId: membership.organization.id } });
  return { ok: true, setCookies, organization: membership.organization };
}

/** After creating or joining an organization: it becomes this session's (a session without a row keeps none). */
export async function makeActive(session: CurrentSession, organizationId: string): Promise<void> {
  if (!session.sessionId) return;
  await db().session.updateMany({ where: { id: session.sessionId, userId: session.userId }, data: { organizationId } });
}

