// An organization's sign-in policy (docs/features/organizations.md#policy, ADR 165 and 166):
// requireSso with up to two break-glass owners, requireMfa, and session limits (idle and
// absolute, never longer than the deployment's). Stored on the Organization row; changed by an
// admin or owner from the page's Policy section (audited). Who it governs:
// - requireSso: the people whose address is on a domain the organization verified (a verified
//   domain belongs to one organization only, so one organization at most);
// - requireMfa and the session limits: those people and the organization's members; with several
//   organizations the strictest wins.
// The sign-in flow asks through the rule the composition root registers (signin/registry.server.ts),
// the session through core's limit hook, and the second-factor gate through its requirement hook:
// nothing below imports this module.
import { db } from "../../db/client.server";
import { notifySecurityChange } from "../accounts/security-notices.server";
import type { AuthConfig } from "../core/config.server";
import { getConfig } from "../core/config.server";
import { AuthError } from "../core/errors";
import { log } from "../core/log.server";
import { clientAddress, type AuthRequest } from "../core/request.server";
import { recordOrgEvent } from "./audit.server";
import { domainOf, enterpriseConnectionsForDomain, isConnectionMethod } from "./connections.server";
import type { MemberContext } from "./organizations.server";
import { endSessionsOutsideConnections } from "./sso-sessions.server";
import { atLeast } from "./roles";

/** At most this many break-glass owners per organization. */
export const BREAK_GLASS_MAX = 2;
/** Without a deployment absolute lifetime, an organization's is still at most a year (a typo of 5,000,000 minutes is refused). */
const ABSOLUTE_CEILING_MINUTES = 366 * 24 * 60;

export type OrgPolicy = {
  requireSso: boolean;
  breakGlassOwners: string[];
  requireMfa: boolean;
  sessionIdleMinutes: number | null;
  sessionAbsoluteMinutes: number | null;
};

const POLICY_SELECT = { requireSso: true, breakGlassOwners: true, requireMfa: true, sessionIdleMinutes: true, sessionAbsoluteMinutes: true } as const;

type PolicyRow = { requireSso: boolean; breakGlassOwners: string; requireMfa: boolean; sessionIdleMinutes: number | null; sessionAbsoluteMinutes: number | null };

function policyOf(row: PolicyRow): OrgPolicy {
  return {
    requireSso: row.requireSso,
    breakGlassOwners: row.breakGlassOwners.split(/\s+/).filter(Boolean),
    requireMfa: row.requireMfa,
    sessionIdleMinutes: row.sessionIdleMinutes,
    sessionAbsoluteMinutes: row.sessionAbsoluteMinutes,
  };
}

/** The longest limits an organization may set, in minutes: the deployment's (null absolute: none, capped at a year). */
export function deploymentLimits(config: Pick<AuthConfig, "sessionMaxAge" | "sessionAbsoluteMaxAge"> = getConfig()): { idle: number; absolute: number; absoluteIsDeployment: boolean } {
  const idle = Math.max(1, Math.floor(config.sessionMaxAge / 60));
  if (config.sessionAbsoluteMaxAge === null) return { idle, absolute: ABSOLUTE_CEILING_MINUTES, absoluteIsDeployment: false };
  return { idle, absolute: Math.max(1, Math.floor(config.sessionAbsoluteMaxAge / 60)), absoluteIsDeployment: true };
}

export async function readPolicy(organizationId: string): Promise<OrgPolicy> {
  const row = await db().organization.findUniqueOrThrow({ where: { id: organizationId }, select: POLICY_SELECT });
  return policyOf(row);
}

/** What the Policy section shows: the policy, the owners to choose break-glass owners from, and the ceilings. */
export async function policySection(organizationId: string) {
  const [policy, owners] = await Promise.all([
    readPolicy(organizationId),
    db().membership.findMany({ where: { organizationId, role: "owner" }, select: { userId: true, user: { select: { email: true, name: true } } }, orderBy: { createdAt: "asc" } }),
  ]);
  const limits = deploymentLimits();
  return {
    policy,
    owners: owners.map((o) => ({ userId: o.userId, label: o.user.name ?? o.user.email ?? o.userId })),
    limits: { idle: limits.idle, absolute: limits.absoluteIsDeployment ? limits.absolute : null },
  };
}

// ---------------------------------------------------------------------------------------------
// Changing the policy

/** Each bad input has its own refusal (one error code each on the page, orgs.server.ts). */
export type PolicyRefusal = "forbidden" | "invalid" | "idle-limit" | "absolute-limit" | "break-glass-owner" | "break-glass-count" | "sso-without-connection";

export type PolicyInput = { requireSso: boolean; requireMfa: boolean; breakGlassOwners: string[]; sessionIdleMinutes: string; sessionAbsoluteMinutes: string };

/** "" is no limit; else a whole number from 1 to `max` (digits only: no "1e3", no "+5", no " 5 "). */
function parseMinutes(text: string, max: number): number | null | "bad" {
  const value = text.trim();
  if (value === "") return null;
  if (!/^[0-9]{1,9}$/.test(value)) return "bad";
  const n = Number(value);
  return n >= 1 && n <= max ? n : "bad";
}

/**
 * Saves the policy as an admin or owner (the page checked the recent sign-in): every field is
 * checked first, then one transaction writes it with its audit event. Turning requireSso on ends
 * the sessions its people started another way (ADR 165), except the break-glass owners'.
 */
export async function updatePolicy(ar: AuthRequest, ctx: MemberContext, input: PolicyInput): Promise<{ ok: true; endedSessions: number } | { ok: false; reason: PolicyRefusal }> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const limits = deploymentLimits(ar.config);
  const idle = parseMinutes(input.sessionIdleMinutes, limits.idle);
  if (idle === "bad") return { ok: false, reason: "idle-limit" };
  const absolute = parseMinutes(input.sessionAbsoluteMinutes, limits.absolute);
  if (absolute === "bad") return { ok: false, reason: "absolute-limit" };
  const breakGlass = [...new Set(input.breakGlassOwners.filter(Boolean))];
  if (breakGlass.length > BREAK_GLASS_MAX) return { ok: false, reason: "break-glass-count" };
  const organizationId = ctx.organization.id;
  // requireSso over a verified domain no connection of this organization serves would leave its
  // people no way in at all (only the break-glass owners): refused, naming nothing but the rule.
  if (input.requireSso && (await domainsWithoutConnection(organizationId)).length > 0) return { ok: false, reason: "sso-without-connection" };
  const result = await db().$transaction(async (tx) => {
    // Inside the transaction: an owner demoted a moment ago is not an owner here.
    const owners = await tx.membership.count({ where: { organizationId, role: "owner", userId: { in: breakGlass } } });
    if (owners !== breakGlass.length) return { ok: false as const, reason: "break-glass-owner" as const };
    const before = policyOf(await tx.organization.findUniqueOrThrow({ where: { id: organizationId }, select: POLICY_SELECT }));
    const after: OrgPolicy = { requireSso: input.requireSso, breakGlassOwners: breakGlass, requireMfa: input.requireMfa, sessionIdleMinutes: idle, sessionAbsoluteMinutes: absolute };
    await tx.organization.update({
      where: { id: organizationId },
      data: { ...after, breakGlassOwners: breakGlass.join(" ") },
    });
    await recordOrgEvent(tx, organizationId, ctx.actor, "policy-changed", { from: before, to: after });
    return { ok: true as const, before, after };
  });
  if (!result.ok) return result;
  let endedSessions = 0;
  if (result.after.requireSso && !result.before.requireSso) endedSessions = await endSessionsOutsideConnections(organizationId, result.after.breakGlassOwners);
  return { ok: true, endedSessions };
}

/** The organization's verified domains that none of its connections serves (any kind). */
export async function domainsWithoutConnection(organizationId: string): Promise<string[]> {
  const domains = await db().organizationDomain.findMany({ where: { organizationId, verifiedDomain: { not: null } }, select: { verifiedDomain: true } });
  const uncovered: string[] = [];
  for (const { verifiedDomain } of domains) {
    const served = (await enterpriseConnectionsForDomain(verifiedDomain!)).some((c) => c.organizationId === organizationId);
    if (!served) uncovered.push(verifiedDomain!);
  }
  return uncovered;
}

// ---------------------------------------------------------------------------------------------
// Who a policy governs

/** The organization whose verified domain holds `address`, with its policy; null when none. */
async function domainOrganization(address: string | null) {
  const domain = domainOf(address);
  if (!domain) return null;
  const row = await db().organizationDomain.findUnique({
    where: { verifiedDomain: domain },
    select: { organization: { select: { id: true, name: true, ...POLICY_SELECT } } },
  });
  return row ? { domain, organization: row.organization } : null;
}

/** The organizations whose requireMfa or limits apply to `userId`: those of their memberships and their address's domain. */
async function governingPolicies(userId: string): Promise<OrgPolicy[]> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { email: true } });
  const domain = domainOf(user?.email);
  const rows = await db().organization.findMany({
    where: {
      OR: [{ memberships: { some: { userId } } }, ...(domain ? [{ domains: { some: { verifiedDomain: domain } } }] : [])],
      AND: [{ OR: [{ requireMfa: true }, { sessionIdleMinutes: { not: null } }, { sessionAbsoluteMinutes: { not: null } }] }],
    },
    select: POLICY_SELECT,
  });
  return rows.map(policyOf);
}

/** A sign-in of `userId` by `method`, its first factor proved: what the policy says (the flow's rule). */
export type PolicyVerdict = { refuse: AuthError } | { requireMfa: boolean };

/**
 * The sign-in rule (registered with the flow by the composition root). requireSso refuses every
 * way in but the organization's connections (SsoRequired, naming the domain so the page can
 * offer its sign-in), except for a break-glass owner, whose use is audited and e-mailed to every
 * owner. requireMfa asks a second factor of any sign-in not through a connection (ADR 166).
 */
export async function signInVerdict(ar: AuthRequest, attempt: { userId: string; method: string; purpose: "signin" | "reauth" | "second-factor" }): Promise<PolicyVerdict> {
  if (!ar.config.organizations) return { requireMfa: false };
  const throughConnection = isConnectionMethod(attempt.method);
  const user = await db().user.findUnique({ where: { id: attempt.userId }, select: { email: true, name: true } });
  const found = await domainOrganization(user?.email ?? null);
  if (found?.organization.requireSso && !throughConnection) {
    const org = found.organization;
    const exempt = policyOf(org).breakGlassOwners.includes(attempt.userId) && (await db().membership.count({ where: { organizationId: org.id, userId: attempt.userId, role: "owner" } })) === 1;
    if (!exempt) {
      return { refuse: new AuthError("SsoRequired", { log: `organization ${org.id} requires its connection`, params: { domain: found.domain } }) };
    }
    // Recorded once per sign-in: at its first factor, not again at its second.
    if (attempt.purpose !== "second-factor") await recordBreakGlassUse(ar, org, { userId: attempt.userId, email: user?.email ?? null, name: user?.name ?? null }, attempt);
  }
  if (throughConnection) return { requireMfa: false };
  return { requireMfa: (await governingPolicies(attempt.userId)).some((p) => p.requireMfa) };
}

/** A break-glass owner used the exemption: the organization's audit log, and a notice to every owner. */
async function recordBreakGlassUse(ar: AuthRequest, org: { id: string; name: string }, person: { userId: string; email: string | null; name: string | null }, attempt: { method: string; purpose: string }) {
  await db().$transaction((tx) =>
    recordOrgEvent(tx, org.id, { userId: person.userId, email: person.email, ip: clientAddress(ar) }, "break-glass-used", { method: attempt.method, purpose: attempt.purpose }),
  );
  const owners = await db().membership.findMany({ where: { organizationId: org.id, role: "owner" }, select: { userId: true } });
  for (const owner of owners) {
    await notifySecurityChange(ar, owner.userId, { kind: "break-glass-used", organization: org.name, person: person.email ?? person.name ?? person.userId });
  }
  log("warn", "break-glass-used", { organizationId: org.id, userId: person.userId, method: attempt.method });
}

/**
 * Whether the session `sessionId` of `userId` is held to a second factor by an organization
 * (the second-factor gate's hook): not a session through a connection (its identity provider is
 * the organization's own, ADR 166).
 */
export async function organizationRequiresMfa(userId: string, sessionId: string | null): Promise<boolean> {
  if (!getConfig().organizations) return false;
  if (sessionId) {
    const row = await db().session.findFirst({ where: { id: sessionId, userId }, select: { method: true } });
    if (isConnectionMethod(row?.method)) return false;
  }
  return (await governingPolicies(userId)).some((p) => p.requireMfa);
}

/** The strictest session limits of the user's organizations, in seconds (core's limit hook); null when none. */
export async function organizationSessionLimits(userId: string): Promise<{ idleSeconds: number | null; absoluteSeconds: number | null } | null> {
  if (!getConfig().organizations) return null;
  const policies = await governingPolicies(userId);
  const min = (values: (number | null)[]) => {
    const set = values.filter((v): v is number => v !== null);
    return set.length ? Math.min(...set) * 60 : null;
  };
  const idleSeconds = min(policies.map((p) => p.sessionIdleMinutes));
  const absoluteSeconds = min(policies.map((p) => p.sessionAbsoluteMinutes));
  return idleSeconds === null && absoluteSeconds === null ? null : { idleSeconds, absoluteSeconds };
}

/**
 * The organization whose requireSso this session is outside of — its person on the organization's
 * domain, its method not a connection, and not a break-glass owner — or null. For the changes a
 * session makes in an organization's name (accepting an invitation): a session the policy would
 * not start does not act (ADR 165).
 */
export async function sessionOutsideSso(userId: string, sessionId: string | null): Promise<{ organizationName: string; domain: string } | null> {
  if (!getConfig().organizations) return null;
  const user = await db().user.findUnique({ where: { id: userId }, select: { email: true } });
  const found = await domainOrganization(user?.email ?? null);
  if (!found?.organization.requireSso) return null;
  const row = sessionId ? await db().session.findFirst({ where: { id: sessionId, userId }, select: { method: true } }) : null;
  if (isConnectionMethod(row?.method)) return null;
  const org = found.organization;
  if (policyOf(org).breakGlassOwners.includes(userId) && (await db().membership.count({ where: { organizationId: org.id, userId, role: "owner" } })) === 1) return null;
  return { organizationName: org.name, domain: found.domain };
}

/**
 * Whether `userId` is a break-glass owner (listed and still an owner) of the organization whose
 * verified domain holds their address. Asked by the password sign-in for every address on a
 * requireSso domain, known or not (null: the same queries), so its time tells nothing (ADR 165 amended).
 */
export async function isBreakGlassOwner(userId: string | null): Promise<boolean> {
  const user = await db().user.findUnique({ where: { id: userId ?? "" }, select: { email: true } });
  const found = await domainOrganization(user?.email ?? "nobody@invalid.invalid");
  const listed = found ? policyOf(found.organization).breakGlassOwners.includes(userId ?? "") : false;
  const owner = await db().membership.count({ where: { organizationId: found?.organization.id ?? "", userId: userId ?? "", role: "owner" } });
  return listed && owner === 1;
}

/**
 * Whether `address` is on a domain whose organization requires its connection: the e-mail link
 * and the forgotten-password page refuse before sending (by the domain alone — the same answer
 * for every address of the domain). The break-glass owners are not told apart here: they sign in
 * with their password, which needs no e-mail.
 */
export async function ssoRequiredForAddress(address: string): Promise<string | null> {
  if (!getConfig().organizations) return null;
  const found = await domainOrganization(address);
  return found?.organization.requireSso ? found.domain : null;
}
