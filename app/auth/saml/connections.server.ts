// SAML connections of an organization (ADR 153): reading them, and adding or removing one (the
// `npm run saml:connection` command; docs/features/saml.md).
import { X509Certificate } from "node:crypto";
import { z } from "zod";
import { db } from "../../db/client.server";
import { isOrgRole, type OrgRole } from "../organizations/roles";

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
