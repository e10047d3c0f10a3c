// Enterprise connections, whatever their protocol (ADR 152): which ones cover a domain, for the
// sign-in page's address step, and which session methods count as "through the organization's
// connection" for its policy (ADR 165). This module imports no protocol: each kind (SAML, OpenID
// Connect) is registered by the composition root (app/auth/signin/registry.server.ts), so
// organizations never import a connection folder and a new kind is one registration.
import { db } from "../../db/client.server";
import { getConfig } from "../core/config.server";

/** One connection offered for a domain: the page's "Continue with <organizationName>". */
export type EnterpriseConnection = { id: string; organizationId: string; organizationName: string; signInPath: string };

/** A protocol's connections for a domain the organization verified (lower-case, no trailing dot). */
export type ConnectionFinder = (domain: string) => Promise<EnterpriseConnection[]>;

/** A protocol: its finder, and the session method its sign-ins record (Session.method). */
export type ConnectionKind = { method: string; forDomain: ConnectionFinder };

const kinds = new Map<string, ConnectionKind>();

/** Called by the composition root once per protocol; registering a method again replaces it. */
export function registerConnectionKind(kind: ConnectionKind): void {
  kinds.set(kind.method, kind);
}

/** Whether a session method is a sign-in through an organization's connection (SAML, OpenID Connect). */
export function isConnectionMethod(method: string | null | undefined): boolean {
  return Boolean(method && kinds.has(method));
}

/** The session methods of every registered kind. */
export function connectionMethods(): string[] {
  return [...kinds.keys()];
}

/** The domain of an address, lower-case; null for anything without exactly one "@" and a domain. */
export function domainOf(address: string | null | undefined): string | null {
  if (!address) return null;
  const at = address.lastIndexOf("@");
  if (at < 1 || at === address.length - 1) return null;
  return address.slice(at + 1).trim().toLowerCase().replace(/\.$/, "") || null;
}

/**
 * Every connection covering `domain`, of every kind, in a stable order (organization name, then
 * id). Only the domain is read — never a user — so every address of the domain gets the same
 * answer with the same work. Empty while organizations are off or when no organization verified
 * the domain.
 */
export async function enterpriseConnectionsForDomain(domain: string): Promise<EnterpriseConnection[]> {
  if (!getConfig().organizations) return [];
  const name = domain.trim().toLowerCase().replace(/\.$/, "");
  if (!name) return [];
  // Each kind answers only for domains its organization verified (a claim nobody proved offers nothing).
  const lists = await Promise.all([...kinds.values()].map((k) => k.forDomain(name)));
  return lists.flat().sort((a, b) => a.organizationName.localeCompare(b.organizationName) || a.id.localeCompare(b.id));
}

/** The organization that verified `domain`, or null (a verified domain belongs to one organization only). */
export async function organizationVerifying(domain: string) {
  return db().organizationDomain.findUnique({ where: { verifiedDomain: domain }, select: { organization: true } }).then((row) => row?.organization ?? null);
}
