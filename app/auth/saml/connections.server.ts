// SAML connections of an organization (ADR 153): reading them, and adding or removing one (the
// `npm run saml:connection` command; docs/features/saml.md).
import { X509Certificate } from "node:crypto";
import { z } from "zod";
import { db } from "../../db/client.server";
import { recordOrgEvent } from "../organizations/audit.server";
import type { MemberContext } from "../organizations/organizations.server";
import { atLeast, isOrgRole, type OrgRole } from "../organizations/roles";
import { acsPath, metadataPath, startPath } from "./paths";

export type AttributeMapping = { email?: string; name?: string };

export type SamlConnectionRow = {
  id: string;
  organizationId: string;
  organizationName: string;
  idpEntityId: string;
  ssoUrl: string;
  certificates: string[];
  domains: string[];
  allowIdpInitiated: boolean;
  attributeMapping: AttributeMapping;
  defaultRole: OrgRole;
};

const Mapping = z.object({ email: z.string().min(1).max(512).optional(), name: z.string().min(1).max(512).optional() }).strict();

export async function findConnection(id: string): Promise<SamlConnectionRow | null> {
  const row = await db().samlConnection.findUnique({ where: { id }, include: { organization: { select: { name: true } } } });
  if (!row) return null;
  const certificates = z.array(z.string()).safeParse(JSON.parse(row.certificates));
  const mapping = Mapping.safeParse(row.attributeMapping ? JSON.parse(row.attributeMapping) : {});
  return {
    id: row.id,
    organizationId: row.organizationId,
    organizationName: row.organization.name,
    idpEntityId: row.idpEntityId,
    ssoUrl: row.ssoUrl,
    certificates: certificates.success ? certificates.data : [],
    domains: row.domains.split(/\s+/).filter(Boolean),
    allowIdpInitiated: row.allowIdpInitiated,
    attributeMapping: mapping.success ? mapping.data : {},
    defaultRole: isOrgRole(row.defaultRole) && row.defaultRole !== "owner" ? row.defaultRole : "member",
  };
}

/** A PEM certificate, checked by parsing it; SHA-1-signed certificates are fine (only the key is used). */
export function normalizeCertificate(pem: string): string {
  const body = pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  const der = Buffer.from(body, "base64");
  new X509Certificate(der); // throws on anything that is not a certificate
  const lines = body.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----`;
}

export const NewConnection = z.object({
  organizationId: z.string().min(1),
  idpEntityId: z.string().min(1).max(1024),
  ssoUrl: z.url({ protocol: /^https?$/ }),
  certificates: z.array(z.string().min(1)).min(1).max(5),
  domains: z.array(z.string().min(1)).min(1),
  allowIdpInitiated: z.boolean().default(false),
  attributeMapping: Mapping.default({}),
  defaultRole: z.enum(["admin", "member"]).default("member"),
});

/** Adds a connection; each domain must be one the organization verified. */
export async function addConnection(input: z.input<typeof NewConnection>): Promise<{ ok: true; id: string } | { ok: false; reason: string }> {
  const parsed = NewConnection.safeParse(input);
  if (!parsed.success) return { ok: false, reason: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
  const value = parsed.data;
  let certificates: string[];
  try {
    certificates = value.certificates.map(normalizeCertificate);
  } catch {
    return { ok: false, reason: "certificates: not a PEM certificate" };
  }
  const domains = value.domains.map((d) => d.toLowerCase());
  const verified = await db().organizationDomain.findMany({ where: { organizationId: value.organizationId, state: "verified", verifiedDomain: { in: domains } } });
  if (verified.length !== new Set(domains).size) return { ok: false, reason: "domains: each must be verified by the organization" };
  const row = await db().samlConnection.create({
    data: {
      organizationId: value.organizationId,
      idpEntityId: value.idpEntityId,
      ssoUrl: value.ssoUrl,
      certificates: JSON.stringify(certificates),
      domains: [...new Set(domains)].join(" "),
      allowIdpInitiated: value.allowIdpInitiated,
      attributeMapping: JSON.stringify(value.attributeMapping),
      defaultRole: value.defaultRole,
    },
  });
  return { ok: true, id: row.id };
}

export async function removeConnection(id: string): Promise<boolean> {
  const { count } = await db().samlConnection.deleteMany({ where: { id } });
  return count === 1;
}

export type ConnectionRefusal = "forbidden" | "not-found" | "invalid";

/** The PEM certificates in a text (one or several BEGIN/END blocks). */
export function certificatesIn(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

/** An admin or owner adds a connection from the organization page; audited. */
export async function addConnectionAs(
  ctx: MemberContext,
  input: { idpEntityId: string; ssoUrl: string; certificates: string; domains: string; idpInitiated: boolean; emailAttribute: string; nameAttribute: string },
): Promise<{ ok: true; id: string } | { ok: false; reason: ConnectionRefusal }> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const mapping: AttributeMapping = {};
  if (input.emailAttribute.trim()) mapping.email = input.emailAttribute.trim();
  if (input.nameAttribute.trim()) mapping.name = input.nameAttribute.trim();
  const result = await addConnection({
    organizationId: ctx.organization.id,
    idpEntityId: input.idpEntityId.trim(),
    ssoUrl: input.ssoUrl.trim(),
    certificates: certificatesIn(input.certificates),
    domains: input.domains.split(/[\s,]+/).filter(Boolean),
    allowIdpInitiated: input.idpInitiated,
    attributeMapping: mapping,
  });
  if (!result.ok) return { ok: false, reason: "invalid" };
  await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "saml-connection-added", { connectionId: result.id, idpEntityId: input.idpEntityId.trim() });
  return result;
}

/** An admin or owner removes one of this organization's connections (another's is not found). */
export async function removeConnectionAs(ctx: MemberContext, id: string): Promise<{ ok: true } | { ok: false; reason: ConnectionRefusal }> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const { count } = await db().samlConnection.deleteMany({ where: { id, organizationId: ctx.organization.id } });
  if (count !== 1) return { ok: false, reason: "not-found" };
  await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "saml-connection-removed", { connectionId: id });
  return { ok: true };
}

export type ConnectionListRow = { id: string; idpEntityId: string; domains: string; allowIdpInitiated: boolean; metadataUrl: string; acsUrl: string; signinUrl: string };

export async function listConnections(organizationId: string, origin: string): Promise<ConnectionListRow[]> {
  const rows = await db().samlConnection.findMany({ where: { organizationId }, orderBy: { createdAt: "asc" } });
  return rows.map((r) => ({
    id: r.id,
    idpEntityId: r.idpEntityId,
    domains: r.domains,
    allowIdpInitiated: r.allowIdpInitiated,
    metadataUrl: `${origin}${metadataPath(r.id)}`,
    acsUrl: `${origin}${acsPath(r.id)}`,
    signinUrl: `${origin}${startPath(r.id)}`,
  }));
}

/**
 * The SAML connections covering `domain` (lower-case) whose organization holds it verified — the
 * address step's finder (organizations/connections.server.ts, ADR 152). A domain the organization
 * no longer holds verified offers nothing, even if a connection still lists it.
 */
export async function samlConnectionsForDomain(domain: string): Promise<{ id: string; organizationId: string; organizationName: string; signInPath: string }[]> {
  const rows = await db().samlConnection.findMany({
    where: { domains: { contains: domain }, organization: { domains: { some: { verifiedDomain: domain } } } },
    select: { id: true, organizationId: true, domains: true, organization: { select: { name: true } } },
  });
  return rows
    .filter((r) => r.domains.split(/\s+/).includes(domain))
    .map((r) => ({ id: r.id, organizationId: r.organizationId, organizationName: r.organization.name, signInPath: startPath(r.id) }));
}
