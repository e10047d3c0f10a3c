// Organizations and their members (docs/features/organizations.md, ADR 146): create (the creator
// is the owner), rename, delete, list, change a member's role, remove a member, leave. Every change
// is one transaction with its audit event; the ones that can take away an owner hold the
// organization's lock, so "an organization always keeps one owner" holds under concurrent changes.
// Each function takes the caller's membership, already found by slug for the signed-in user (a
// non-member never gets here: the pages answer 404), and finds every other member inside that
// organization only: another organization's member id is "not-found", never a conflict.
import { db, dbProvider } from "../../db/client.server";
import { log } from "../core/log.server";
import { recordOrgEvent, type OrgActor } from "./audit.server";
import { atLeast, isOrgRole, mayAssign, type OrgRole } from "./roles";
import { dropBreakGlassOwner, endSessionsAfterOwnerLost } from "./sso-sessions.server";

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

/** Slugs: lower-case letters, digits and single hyphens, 2 to 40 characters; never a word /orgs uses itself. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){1,39}$/;
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(["new", "switch", "invitation", "invitations", "audit", "api"]);
export const ORG_NAME_MAX = 100;

export type OrgRef = { id: string; slug: string; name: string };
export type MemberContext = { organization: OrgRef; membership: { id: string; userId: string; role: OrgRole }; actor: OrgActor };
export type OrgRefusal = "not-found" | "forbidden" | "last-owner" | "slug-taken" | "invalid";
export type OrgResult<T = object> = ({ ok: true } & T) | { ok: false; reason: OrgRefusal };

/** The signed-in user's membership of the organization named `slug`, or null (unknown slug or not a member: the same). */
export async function findMemberContext(slug: string, userId: string): Promise<{ organization: OrgRef; membership: MemberContext["membership"] } | null> {
  if (!SLUG_PATTERN.test(slug)) return null;
  const row = await db().membership.findFirst({
    where: { userId, organization: { slug } },
    select: { id: true, userId: true, role: true, organization: { select: { id: true, slug: true, name: true } } },
  });
  if (!row || !isOrgRole(row.role)) return null;
  return { organization: row.organization, membership: { id: row.id, userId: row.userId, role: row.role } };
}

/**
 * Takes the organization's lock until the transaction ends: role changes, removals and departures
 * one at a time per organization. PostgreSQL: an advisory transaction lock keyed by the id; SQLite:
 * the database's write lock, taken by a first write.
 */
export async function holdOrgLock(tx: Tx, organizationId: string): Promise<void> {
  if (dbProvider() === "postgres") await tx.$queryRawUnsafe("SELECT 1 AS locked FROM pg_advisory_xact_lock(7707146, hashtext($1))", organizationId);
  else await tx.$executeRawUnsafe('UPDATE "Organization" SET "name" = "name" WHERE "id" = ?', organizationId);
}

/** Inside holdOrgLock: whether `membershipId` is an owner and no other member is. */
async function isLastOwner(tx: Tx, organizationId: string, membershipId: string): Promise<boolean> {
  const row = await tx.membership.findFirst({ where: { id: membershipId, organizationId }, select: { role: true } });
  if (row?.role !== "owner") return false;
  return (await tx.membership.count({ where: { organizationId, role: "owner", id: { not: membershipId } } })) === 0;
}

export function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}

/** A new organization, its creator as owner. */
export async function createOrganization(userId: string, input: { name: string; slug: string }, actor: OrgActor): Promise<OrgResult<{ organization: OrgRef }>> {
  if (!SLUG_PATTERN.test(input.slug) || RESERVED_SLUGS.has(input.slug)) return { ok: false, reason: "invalid" };
  try {
    const organization = await db().$transaction(async (tx) => {
      const org = await tx.organization.create({ data: { name: input.name, slug: input.slug }, select: { id: true, slug: true, name: true } });
      await tx.membership.create({ data: { organizationId: org.id, userId, role: "owner" } });
      await recordOrgEvent(tx, org.id, actor, "organization-created", { name: org.name, slug: org.slug });
      return org;
    });
    return { ok: true, organization };
  } catch (error) {
    if (isUniqueViolation(error)) return { ok: false, reason: "slug-taken" };
    throw error;
  }
}

export async function renameOrganization(ctx: MemberContext, name: string): Promise<OrgResult> {
  if (ctx.membership.role !== "owner") return { ok: false, reason: "forbidden" };
  if (name === ctx.organization.name) return { ok: true };
  await db().$transaction(async (tx) => {
    await tx.organization.update({ where: { id: ctx.organization.id }, data: { name } });
    await recordOrgEvent(tx, ctx.organization.id, ctx.actor, "organization-renamed", { from: ctx.organization.name, to: name });
  });
  return { ok: true };
}

/** Deletes the organization and everything in it (members, invitations, domains, its audit log). Owners only. */
export async function deleteOrganization(ctx: MemberContext): Promise<OrgResult> {
  if (ctx.membership.role !== "owner") return { ok: false, reason: "forbidden" };
  await db().organization.deleteMany({ where: { id: ctx.organization.id } });
  // Its own audit log goes with it: the deletion is one structured log line naming who did it.
  log("info", "organization-deleted", { organizationId: ctx.organization.id, slug: ctx.organization.slug, by: ctx.actor.userId, ip: ctx.actor.ip });
  return { ok: true };
}

export type MyOrganization = { id: string; slug: string; name: string; role: OrgRole };

/** The organizations the user belongs to, by name. */
export async function listMyOrganizations(userId: string): Promise<MyOrganization[]> {
  const rows = await db().membership.findMany({
    where: { userId },
    select: { role: true, organization: { select: { id: true, slug: true, name: true } } },
    orderBy: { organization: { name: "asc" } },
  });
  return rows.flatMap((r) => (isOrgRole(r.role) ? [{ ...r.organization, role: r.role }] : []));
}

export type MemberRow = { id: string; userId: string; name: string | null; email: string | null; role: OrgRole; since: string };

export async function listMembers(organizationId: string): Promise<MemberRow[]> {
  const rows = await db().membership.findMany({
    where: { organizationId },
    select: { id: true, userId: true, role: true, createdAt: true, user: { select: { name: true, email: true } } },
    orderBy: { createdAt: "asc" },
  });
  return rows.flatMap((r) => (isOrgRole(r.role) ? [{ id: r.id, userId: r.userId, name: r.user.name, email: r.user.email, role: r.role, since: r.createdAt.toISOString() }] : []));
}

/** The member's sessions stop working in this organization (their next read finds no membership anyway). */
async function forgetActive(tx: Tx, organizationId: string, userId: string) {
  await tx.session.updateMany({ where: { userId, organizationId }, data: { organizationId: null } });
}

/**
 * After a change that took an owner's role away committed: requireSso governs them now like
 * everyone on the organization's domains (their password sessions end, ADR 165 amended).
 */
async function afterOwnerLost(ctx: MemberContext, result: OrgResult & { ownerLost?: string }): Promise<OrgResult> {
  if (result.ok && result.ownerLost) await endSessionsAfterOwnerLost(ctx.organization.id, result.ownerLost, ctx.actor);
  return result.ok ? { ok: true } : result;
}

export async function changeMemberRole(ctx: MemberContext, membershipId: string, role: unknown): Promise<OrgResult> {
  if (!isOrgRole(role)) return { ok: false, reason: "invalid" };
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const result = await db().$transaction(async (tx): Promise<OrgResult & { ownerLost?: string }> => {
    await holdOrgLock(tx, ctx.organization.id);
    const target = await tx.membership.findFirst({ where: { id: membershipId, organizationId: ctx.organization.id }, select: { id: true, userId: true, role: true } });
    if (!target || !isOrgRole(target.role)) return { ok: false, reason: "not-found" };
    if (!mayAssign(ctx.membership.role, target.role, role)) return { ok: false, reason: "forbidden" };
    if (target.role === role) return { ok: true };
    if (target.role === "owner" && (await isLastOwner(tx, ctx.organization.id, target.id))) return { ok: false, reason: "last-owner" };
    await tx.membership.update({ where: { id: target.id }, data: { role } });
    await recordOrgEvent(tx, ctx.organization.id, ctx.actor, "member-role-changed", { userId: target.userId, from: target.role, to: role });
    if (target.role !== "owner") return { ok: true };
    await dropBreakGlassOwner(tx, ctx.organization.id, target.userId, ctx.actor);
    return { ok: true, ownerLost: target.userId };
  });
  return afterOwnerLost(ctx, result);
}

export async function removeMember(ctx: MemberContext, membershipId: string): Promise<OrgResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const result = await db().$transaction(async (tx): Promise<OrgResult & { ownerLost?: string }> => {
    await holdOrgLock(tx, ctx.organization.id);
    const target = await tx.membership.findFirst({ where: { id: membershipId, organizationId: ctx.organization.id }, select: { id: true, userId: true, role: true } });
    if (!target || !isOrgRole(target.role)) return { ok: false, reason: "not-found" };
    if (!mayAssign(ctx.membership.role, target.role, "member")) return { ok: false, reason: "forbidden" };
    if (await isLastOwner(tx, ctx.organization.id, target.id)) return { ok: false, reason: "last-owner" };
    await tx.membership.delete({ where: { id: target.id } });
    await forgetActive(tx, ctx.organization.id, target.userId);
    await recordOrgEvent(tx, ctx.organization.id, ctx.actor, target.userId === ctx.membership.userId ? "member-left" : "member-removed", { userId: target.userId, role: target.role });
    if (target.role !== "owner") return { ok: true };
    await dropBreakGlassOwner(tx, ctx.organization.id, target.userId, ctx.actor);
    return { ok: true, ownerLost: target.userId };
  });
  return afterOwnerLost(ctx, result);
}

/** The signed-in member leaves; the last owner cannot (they name another owner or delete the organization). */
export async function leaveOrganization(ctx: MemberContext): Promise<OrgResult> {
  const result = await db().$transaction(async (tx): Promise<OrgResult & { ownerLost?: string }> => {
    await holdOrgLock(tx, ctx.organization.id);
    if (await isLastOwner(tx, ctx.organization.id, ctx.membership.id)) return { ok: false, reason: "last-owner" };
    const { count } = await tx.membership.deleteMany({ where: { id: ctx.membership.id, organizationId: ctx.organization.id } });
    if (count === 0) return { ok: false, reason: "not-found" };
    await forgetActive(tx, ctx.organization.id, ctx.membership.userId);
    await recordOrgEvent(tx, ctx.organization.id, ctx.actor, "member-left", { userId: ctx.membership.userId, role: ctx.membership.role });
    if (ctx.membership.role !== "owner") return { ok: true };
    await dropBreakGlassOwner(tx, ctx.organization.id, ctx.membership.userId, ctx.actor);
    return { ok: true, ownerLost: ctx.membership.userId };
  });
  return afterOwnerLost(ctx, result);
}

/** Adds the user as a member with `role` (an accepted invitation) unless they already are one; inside the caller's transaction. */
export async function addMemberIn(tx: Tx, organizationId: string, userId: string, role: OrgRole, actor: OrgActor): Promise<boolean> {
  const existing = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId, userId } }, select: { id: true } });
  if (existing) return false;
  await tx.membership.create({ data: { organizationId, userId, role } });
  await recordOrgEvent(tx, organizationId, actor, "member-added", { userId, role });
  return true;
}
