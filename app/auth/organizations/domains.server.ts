// Domains an organization claims (docs/features/organizations.md, ADR 149). An admin adds one and
// is shown a DNS TXT record, `_vestibule-challenge.<domain>` holding a random token; "Verify" looks
// it up through node:dns with the resolvers of AUTH_DNS_SERVERS (the system's when unset). A
// verified domain belongs to one organization only (OrganizationDomain.verifiedDomain is unique);
// a claim nobody verified blocks nobody, so a squatter who adds a company's domain first never
// stops the company. Verified domains are checked again daily (recheckDomains, run by the server's
// hourly maintenance): a record gone from DNS takes the verification away.
import { Resolver } from "node:dns/promises";
import { domainToASCII } from "node:url";
import { db } from "../../db/client.server";
import { getConfig } from "../core/config.server";
import { randomToken } from "../core/crypto.server";
import { log } from "../core/log.server";
import { recordOrgEvent, type OrgActor } from "./audit.server";
import { CONSUMER_DOMAINS } from "./consumer-domains";
import { endSessionsAfterDomainVerified } from "./sso-sessions.server";
import type { MemberContext } from "./organizations.server";
import { atLeast } from "./roles";

/** The label under the domain whose TXT record proves it. */
export const CHALLENGE_LABEL = "_vestibule-challenge";
/** A verified domain is looked up again when its last check is this old. */
export const DOMAIN_RECHECK_MS = 24 * 60 * 60_000;
/** One lookup's bound: a resolver that does not answer is a failed check, not a hung request. */
const DNS_TIMEOUT_MS = 3_000;
const DNS_TRIES = 2;
/** Domains one maintenance run checks at most. */
const RECHECK_BATCH = 200;

export type DomainState = "pending" | "verified" | "failed";
export type DomainRefusal = "forbidden" | "invalid-domain" | "consumer-domain" | "already-added" | "not-found" | "record-missing" | "dns-error" | "taken";
export type DomainResult = { ok: true } | { ok: false; reason: DomainRefusal };

/** A domain as typed → its lower-case ASCII (punycode) form, or null when it is not a registrable host name. */
export function normalizeDomain(input: unknown): string | null {
  if (typeof input !== "string") return null;
  const trimmed = input.trim().replace(/\.$/, "").toLowerCase();
  if (!trimmed || trimmed.length > 253 || /[\s/@:]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed);
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split(".");
  if (labels.length < 2) return null;
  if (!labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) return null;
  // The last label is a top-level domain: letters (or punycode), never all digits (an IP address).
  if (!/^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/.test(labels.at(-1)!)) return null;
  return ascii;
}

/** Whether `domain` is, or is under, a consumer mailbox provider's domain. */
export function isConsumerDomain(domain: string): boolean {
  const labels = domain.split(".");
  for (let i = 0; i < labels.length - 1; i++) if (CONSUMER_DOMAINS.has(labels.slice(i).join("."))) return true;
  return false;
}

export function challengeName(domain: string): string {
  return `${CHALLENGE_LABEL}.${domain}`;
}

/** What DNS says about the domain's challenge: the token is there, it is not, or the lookup failed. */
export async function lookUpChallenge(domain: string, token: string, servers = getConfig().dnsServers): Promise<"found" | "missing" | "error"> {
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES });
  if (servers) resolver.setServers([...servers]);
  try {
    const records = await resolver.resolveTxt(challengeName(domain));
    return records.some((chunks) => chunks.join("") === token) ? "found" : "missing";
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENODATA" || code === "ENOTFOUND") return "missing";
    log("warn", "dns-lookup-failed", { domain, code: typeof code === "string" ? code : "unknown" });
    return "error";
  } finally {
    resolver.cancel();
  }
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}

export async function addDomain(ctx: MemberContext, input: unknown): Promise<DomainResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const domain = normalizeDomain(input);
  if (!domain) return { ok: false, reason: "invalid-domain" };
  if (isConsumerDomain(domain)) return { ok: false, reason: "consumer-domain" };
  try {
    await db().$transaction(async (tx) => {
      const row = await tx.organizationDomain.create({ data: { organizationId: ctx.organization.id, domain, verificationToken: `vestibule-${randomToken(24)}` }, select: { id: true } });
      await recordOrgEvent(tx, ctx.organization.id, ctx.actor, "domain-added", { domainId: row.id, domain });
    });
  } catch (error) {
    if (isUniqueViolation(error)) return { ok: false, reason: "already-added" };
    throw error;
  }
  return { ok: true };
}

/**
 * Sets the row verified when no other organization holds the domain verified. Returns false when
 * another one does (the unique verifiedDomain refused it).
 */
async function markVerified(id: string, domain: string, organizationId: string, actor: OrgActor, now: Date, wasVerified: boolean): Promise<boolean> {
  try {
    await db().$transaction(async (tx) => {
      await tx.organizationDomain.update({ where: { id }, data: { state: "verified", verifiedDomain: domain, verifiedAt: wasVerified ? undefined : now, lastCheckedAt: now } });
      if (!wasVerified) await recordOrgEvent(tx, organizationId, actor, "domain-verified", { domainId: id, domain });
    });
    // A domain verified while requireSso is on: its people fall under it now (ADR 165 amended).
    if (!wasVerified) await endSessionsAfterDomainVerified(organizationId, domain, actor);
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** "Verify": looks the record up now. */
export async function verifyDomain(ctx: MemberContext, domainId: string, now = new Date()): Promise<DomainResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const row = await db().organizationDomain.findFirst({ where: { id: domainId, organizationId: ctx.organization.id } });
  if (!row) return { ok: false, reason: "not-found" };
  const found = await lookUpChallenge(row.domain, row.verificationToken);
  if (found === "error") return { ok: false, reason: "dns-error" };
  if (found === "missing") {
    await db().organizationDomain.update({ where: { id: row.id }, data: { lastCheckedAt: now } });
    return { ok: false, reason: "record-missing" };
  }
  if (row.state === "verified") {
    await db().organizationDomain.update({ where: { id: row.id }, data: { lastCheckedAt: now } });
    return { ok: true };
  }
  return (await markVerified(row.id, row.domain, ctx.organization.id, ctx.actor, now, false)) ? { ok: true } : { ok: false, reason: "taken" };
}

export async function removeDomain(ctx: MemberContext, domainId: string): Promise<DomainResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const row = await db().organizationDomain.findFirst({ where: { id: domainId, organizationId: ctx.organization.id }, select: { id: true, domain: true } });
  if (!row) return { ok: false, reason: "not-found" };
  await db().$transaction(async (tx) => {
    await tx.organizationDomain.delete({ where: { id: row.id } });
    await recordOrgEvent(tx, ctx.organization.id, ctx.actor, "domain-removed", { domainId: row.id, domain: row.domain });
  });
  return { ok: true };
}

export type DomainRow = { id: string; domain: string; state: DomainState; recordName: string; recordValue: string; verifiedAt: string | null; lastCheckedAt: string | null };

export async function listDomains(organizationId: string): Promise<DomainRow[]> {
  const rows = await db().organizationDomain.findMany({ where: { organizationId }, orderBy: { domain: "asc" } });
  return rows.map((r) => ({
    id: r.id,
    domain: r.domain,
    state: (r.state === "verified" || r.state === "failed" ? r.state : "pending") as DomainState,
    recordName: challengeName(r.domain),
    recordValue: r.verificationToken,
    verifiedAt: r.verifiedAt?.toISOString() ?? null,
    lastCheckedAt: r.lastCheckedAt?.toISOString() ?? null,
  }));
}

/** The system as the actor of the daily check's audit events. */
const DAILY_CHECK: OrgActor = { userId: null, email: null, ip: null };

/**
 * The daily check: every verified (or once verified, now failed) domain whose last check is a day
 * old is looked up again. Gone from DNS: the domain is no longer verified (state "failed", an
 * audit event); back in DNS: verified again, unless another organization verified it meanwhile.
 * A lookup that fails (a resolver down) changes nothing but is tried again at the next run.
 */
export async function recheckDomains(now = new Date()): Promise<{ checked: number; failed: number; restored: number }> {
  const due = await db().organizationDomain.findMany({
    where: { state: { in: ["verified", "failed"] }, OR: [{ lastCheckedAt: null }, { lastCheckedAt: { lt: new Date(now.getTime() - DOMAIN_RECHECK_MS) } }] },
    orderBy: { lastCheckedAt: "asc" },
    take: RECHECK_BATCH,
  });
  let failed = 0;
  let restored = 0;
  for (const row of due) {
    const found = await lookUpChallenge(row.domain, row.verificationToken);
    if (found === "error") continue;
    if (found === "found") {
      if (row.state === "failed" && (await markVerified(row.id, row.domain, row.organizationId, DAILY_CHECK, now, false))) restored++;
      else await db().organizationDomain.update({ where: { id: row.id }, data: { lastCheckedAt: now } });
      continue;
    }
    if (row.state === "verified") {
      await db().$transaction(async (tx) => {
        await tx.organizationDomain.update({ where: { id: row.id }, data: { state: "failed", verifiedDomain: null, lastCheckedAt: now } });
        await recordOrgEvent(tx, row.organizationId, DAILY_CHECK, "domain-failed", { domainId: row.id, domain: row.domain });
      });
      failed++;
    } else await db().organizationDomain.update({ where: { id: row.id }, data: { lastCheckedAt: now } });
  }
  return { checked: due.length, failed, restored };
}

/** A run that never throws, for the server's schedule: what it did goes to the log. */
export async function recheckDomainsLogged(): Promise<void> {
  if (!getConfig().organizations) return;
  try {
    const result = await recheckDomains();
    if (result.checked) log("info", "domains-rechecked", result);
  } catch (error) {
    log("warn", "domains-recheck-failed", { error });
  }
}

/** The name of the organization's domain `id` (for a sentence about it), or null. */
export async function domainNamed(organizationId: string, id: string): Promise<string | null> {
  const row = await db().organizationDomain.findFirst({ where: { id, organizationId }, select: { domain: true } });
  return row?.domain ?? null;
}
