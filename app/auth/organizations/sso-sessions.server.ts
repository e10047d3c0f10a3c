// requireSso held after it was switched on (ADR 165, amended): the sessions it would refuse to
// start end not only when it is turned on, but whenever someone falls under it later — a
// break-glass owner who stops being an owner (demoted, removed, left, deprovisioned), and the people
// of a domain verified while it is on. One module so the policy page, membership changes, SCIM and
// domain verification share one rule.
import { db } from "../../db/client.server";
import { endSessionsWhere } from "../core/session.server";
import { recordOrgEvent, type OrgActor } from "./audit.server";
import { connectionMethods } from "./connections.server";

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

const listOf = (text: string) => text.split(/\s+/).filter(Boolean);

/** The organization's break-glass owners that are still its owners (the exemption needs both). */
async function exemptOwners(organizationId: string): Promise<string[]> {
  const org = await db().organization.findUnique({ where: { id: organizationId }, select: { breakGlassOwners: true } });
  const listed = listOf(org?.breakGlassOwners ?? "");
  if (!listed.length) return [];
  const owners = await db().membership.findMany({ where: { organizationId, role: "owner", userId: { in: listed } }, select: { userId: true } });
  return owners.map((o) => o.userId);
}

/**
 * Ends, on every instance and for both strategies, the sessions that did not come through a
 * connection of the people on the organization's verified domains (only `domain`, or only
 * `userId`, when given), except `exempt`. Returns how many ended.
 */
export async function endSessionsOutsideConnections(organizationId: string, exempt: readonly string[], only: { domain?: string; userId?: string } = {}): Promise<number> {
  const domains = await db().organizationDomain.findMany({
    where: { organizationId, verifiedDomain: only.domain ? only.domain : { not: null } },
    select: { verifiedDomain: true },
  });
  let ended = 0;
  for (const { verifiedDomain } of domains) {
    const people = await db().user.findMany({
      where: { email: { endsWith: `@${verifiedDomain}` }, id: only.userId ? { equals: only.userId, notIn: [...exempt] } : { notIn: [...exempt] } },
      select: { id: true },
    });
    for (const person of people) ended += (await endSessionsWhere({ userId: person.id, notMethods: connectionMethods() })).length;
  }
  return ended;
}

/**
 * Inside the transaction that takes an owner's role away (demoted, removed, left, deprovisioned):
 * they are no longer a break-glass owner either. The list is rewritten (audited as a policy
 * change), so the Policy section never shows someone the exemption no longer covers.
 */
export async function dropBreakGlassOwner(tx: Tx, organizationId: string, userId: string, actor: OrgActor): Promise<void> {
  const org = await tx.organization.findUnique({ where: { id: organizationId }, select: { breakGlassOwners: true } });
  const before = listOf(org?.breakGlassOwners ?? "");
  if (!before.includes(userId)) return;
  const after = before.filter((id) => id !== userId);
  await tx.organization.update({ where: { id: organizationId }, data: { breakGlassOwners: after.join(" ") } });
  await recordOrgEvent(tx, organizationId, actor, "policy-changed", { from: { breakGlassOwners: before }, to: { breakGlassOwners: after }, because: "owner-role-lost", userId });
}

/**
 * After an owner's role is gone (the transaction committed): with requireSso on and their address
 * on one of the organization's verified domains, their sessions outside its connections end.
 */
export async function endSessionsAfterOwnerLost(organizationId: string, userId: string, actor: OrgActor): Promise<number> {
  const org = await db().organization.findUnique({ where: { id: organizationId }, select: { requireSso: true } });
  if (!org?.requireSso) return 0;
  const ended = await endSessionsOutsideConnections(organizationId, await exemptOwners(organizationId), { userId });
  if (ended > 0) await db().$transaction((tx) => recordOrgEvent(tx, organizationId, actor, "sso-sessions-ended", { userId, sessions: ended, because: "owner-role-lost" }));
  return ended;
}

/**
 * After a domain became verified (by hand or the daily check restoring it): with requireSso on, the
 * domain's people's sessions outside the organization's connections end, the break-glass owners'
 * excepted.
 */
export async function endSessionsAfterDomainVerified(organizationId: string, domain: string, actor: OrgActor): Promise<number> {
  const org = await db().organization.findUnique({ where: { id: organizationId }, select: { requireSso: true } });
  if (!org?.requireSso) return 0;
  const ended = await endSessionsOutsideConnections(organizationId, await exemptOwners(organizationId), { domain });
  if (ended > 0) await db().$transaction((tx) => recordOrgEvent(tx, organizationId, actor, "sso-sessions-ended", { domain, sessions: ended, because: "domain-verified" }));
  return ended;
}
