// SAML connections of an organization (ADR 153): reading them, and adding or removing one (the
// `npm run saml:connection` command; docs/features/saml.md).
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { db } from "../../db/client.server";
import { getConfig } from "../core/config.server";
import { endSessionsStartedWith } from "../core/session.server";
import { recordOrgEvent } from "../organizations/audit.server";
import type { MemberContext } from "../organizations/organizations.server";
import { atLeast, isOrgRole, type OrgRole } from "../organizations/roles";
import { certificatesIn, describeCertificate, MAX_CERTIFICATES, normalizeCertificate, type CertificateSummary } from "./certificates.server";
import { fetchIdpMetadata, IdpMetadataError, parseIdpMetadata, type IdpMetadataFailure } from "./idp-metadata.server";
import { acsPath, metadataPath, startPath, SAML_CREDENTIAL_PREFIX } from "./paths";
import { newSpKeyPair, sealSpPrivateKey } from "./sp-keys.server";

export { certificatesIn, normalizeCertificate };

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

/** A connection id in the shape of the others (a letter and 24 lower-case letters and digits). */
function newConnectionId(): string {
  const bytes = randomBytes(24);
  return `c${Array.from(bytes, (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36]).join("")}`;
}

export const NewConnection = z.object({
  organizationId: z.string().min(1),
  idpEntityId: z.string().min(1).max(1024),
  ssoUrl: z.url({ protocol: /^https?$/ }),
  certificates: z.array(z.string().min(1)).min(1).max(MAX_CERTIFICATES),
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
  // The service provider's own key pair for encrypted assertions (ADR 168), its private key sealed
  // for this very row: the id is chosen here so that the row is written whole, in one insert.
  const id = newConnectionId();
  const keys = await newSpKeyPair();
  const row = await db().samlConnection.create({
    data: {
      id,
      organizationId: value.organizationId,
      idpEntityId: value.idpEntityId,
      ssoUrl: value.ssoUrl,
      certificates: JSON.stringify([...new Set(certificates)]),
      domains: [...new Set(domains)].join(" "),
      allowIdpInitiated: value.allowIdpInitiated,
      attributeMapping: JSON.stringify(value.attributeMapping),
      defaultRole: value.defaultRole,
      encryptionCert: keys.certificate,
      decryptionKey: await sealSpPrivateKey(id, keys.privateKey, getConfig().secrets),
    },
  });
  return { ok: true, id: row.id };
}

/**
 * Removes a connection (of `organizationId`, when given). Its people keep their accounts and
 * memberships; the link (connection, NameID) → account goes with it (the identities cascade), and
 * every session such a link started ends, as when a provider account is unlinked (ADR 167).
 */
export async function removeConnection(id: string, organizationId?: string): Promise<boolean> {
  const identities = await db().samlIdentity.findMany({ where: { connectionId: id, ...(organizationId ? { connection: { organizationId } } : {}) }, select: { id: true, userId: true } });
  const { count } = await db().samlConnection.deleteMany({ where: { id, ...(organizationId ? { organizationId } : {}) } });
  if (count !== 1) return false;
  for (const identity of identities) await endSessionsStartedWith(identity.userId, `${SAML_CREDENTIAL_PREFIX}${identity.id}`);
  return true;
}

export type ConnectionRefusal = "forbidden" | "not-found" | "invalid" | "metadata" | "bad-certificate" | "too-many-certificates" | "last-certificate";
export type ConnectionResult<T = object> = ({ ok: true } & T) | { ok: false; reason: ConnectionRefusal; failure?: IdpMetadataFailure };

export type IdpSettingsInput = { idpEntityId: string; ssoUrl: string; certificates: string; metadataXml?: string; metadataUrl?: string };
type IdpSettings = { idpEntityId: string; ssoUrl: string; certificates: string[] };

/**
 * The IdP's entity id, SSO URL and certificates: from its metadata (a URL, fetched; or pasted XML)
 * when given, each field typed in the form taking precedence, and pasted certificates added to
 * those of the metadata.
 */
export async function idpSettingsFrom(input: IdpSettingsInput): Promise<{ ok: true; settings: IdpSettings } | { ok: false; failure: IdpMetadataFailure }> {
  const typed = { idpEntityId: input.idpEntityId.trim(), ssoUrl: input.ssoUrl.trim(), certificates: certificatesIn(input.certificates) };
  const url = input.metadataUrl?.trim() ?? "";
  const xml = input.metadataXml?.trim() ?? "";
  if (!url && !xml) return { ok: true, settings: typed };
  try {
    const metadata = url ? await fetchIdpMetadata(url) : parseIdpMetadata(xml);
    return {
      ok: true,
      settings: {
        idpEntityId: typed.idpEntityId || metadata.entityId,
        ssoUrl: typed.ssoUrl || metadata.ssoUrl,
        certificates: [...metadata.certificates, ...typed.certificates],
      },
    };
  } catch (error) {
    if (error instanceof IdpMetadataError) return { ok: false, failure: error.reason };
    throw error;
  }
}

/** An admin or owner adds a connection from the organization page; audited. */
export async function addConnectionAs(
  ctx: MemberContext,
  input: IdpSettingsInput & { domains: string; idpInitiated: boolean; emailAttribute: string; nameAttribute: string },
): Promise<ConnectionResult<{ id: string }>> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const idp = await idpSettingsFrom(input);
  if (!idp.ok) return { ok: false, reason: "metadata", failure: idp.failure };
  const mapping: AttributeMapping = {};
  if (input.emailAttribute.trim()) mapping.email = input.emailAttribute.trim();
  if (input.nameAttribute.trim()) mapping.name = input.nameAttribute.trim();
  const result = await addConnection({
    organizationId: ctx.organization.id,
    ...idp.settings,
    domains: input.domains.split(/[\s,]+/).filter(Boolean),
    allowIdpInitiated: input.idpInitiated,
    attributeMapping: mapping,
  });
  if (!result.ok) return { ok: false, reason: "invalid" };
  await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "saml-connection-added", { connectionId: result.id, idpEntityId: idp.settings.idpEntityId, idpInitiated: input.idpInitiated });
  return result;
}

/** An admin or owner removes one of this organization's connections (another's is not found). */
export async function removeConnectionAs(ctx: MemberContext, id: string): Promise<ConnectionResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  if (!(await removeConnection(id, ctx.organization.id))) return { ok: false, reason: "not-found" };
  await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "saml-connection-removed", { connectionId: id });
  return { ok: true };
}

/**
 * Changes a connection's certificate list with `change` (the current PEM list in, the new one
 * out, or a refusal). Compare-and-set on the stored list, so two admins' changes never lose one.
 */
async function changeCertificates(
  connectionId: string,
  organizationId: string | null,
  change: (current: string[]) => { ok: true; next: string[] } | { ok: false; reason: ConnectionRefusal },
): Promise<ConnectionResult> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const row = await db().samlConnection.findFirst({ where: { id: connectionId, ...(organizationId ? { organizationId } : {}) }, select: { certificates: true } });
    if (!row) return { ok: false, reason: "not-found" };
    const parsed = z.array(z.string()).safeParse(JSON.parse(row.certificates));
    const outcome = change(parsed.success ? parsed.data : []);
    if (!outcome.ok) return outcome;
    const { count } = await db().samlConnection.updateMany({ where: { id: connectionId, certificates: row.certificates }, data: { certificates: JSON.stringify(outcome.next) } });
    if (count === 1) return { ok: true };
  }
  return { ok: false, reason: "invalid" };
}

/** Adds the certificates in `text` (PEM) to a connection: the first step of a rotation. */
export function addCertificates(connectionId: string, organizationId: string | null, text: string): Promise<ConnectionResult> {
  let added: string[];
  try {
    added = certificatesIn(text).map(normalizeCertificate);
  } catch {
    return Promise.resolve({ ok: false, reason: "bad-certificate" });
  }
  if (added.length === 0) return Promise.resolve({ ok: false, reason: "bad-certificate" });
  return changeCertificates(connectionId, organizationId, (current) => {
    const next = [...new Set([...current, ...added])];
    return next.length > MAX_CERTIFICATES ? { ok: false, reason: "too-many-certificates" } : { ok: true, next };
  });
}

/** Removes the certificate with this SHA-256 fingerprint; the last one always stays. */
export function removeCertificate(connectionId: string, organizationId: string | null, fingerprint: string): Promise<ConnectionResult> {
  const wanted = fingerprint.trim().toUpperCase();
  return changeCertificates(connectionId, organizationId, (current) => {
    const next = current.filter((pem) => describeCertificate(pem).fingerprint !== wanted);
    if (next.length === current.length) return { ok: false, reason: "not-found" };
    if (next.length === 0) return { ok: false, reason: "last-certificate" };
    return { ok: true, next };
  });
}

export async function addCertificatesAs(ctx: MemberContext, connectionId: string, text: string): Promise<ConnectionResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const result = await addCertificates(connectionId, ctx.organization.id, text);
  if (result.ok) {
    const fingerprints = certificatesIn(text).map((pem) => describeCertificate(pem).fingerprint);
    await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "saml-certificate-added", { connectionId, fingerprints });
  }
  return result;
}

export async function removeCertificateAs(ctx: MemberContext, connectionId: string, fingerprint: string): Promise<ConnectionResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const result = await removeCertificate(connectionId, ctx.organization.id, fingerprint);
  if (result.ok) await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "saml-certificate-removed", { connectionId, fingerprint: fingerprint.trim().toUpperCase() });
  return result;
}

/** Turns IdP-initiated sign-in on or off for one connection (off by default; ADR 154). */
export async function setIdpInitiatedAs(ctx: MemberContext, connectionId: string, on: boolean): Promise<ConnectionResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const { count } = await db().samlConnection.updateMany({ where: { id: connectionId, organizationId: ctx.organization.id }, data: { allowIdpInitiated: on } });
  if (count !== 1) return { ok: false, reason: "not-found" };
  await recordOrgEvent(db(), ctx.organization.id, ctx.actor, "saml-idp-initiated-changed", { connectionId, on });
  return { ok: true };
}

export type ConnectionListRow = {
  id: string;
  idpEntityId: string;
  ssoUrl: string;
  domains: string;
  allowIdpInitiated: boolean;
  certificates: CertificateSummary[];
  metadataUrl: string;
  acsUrl: string;
  signinUrl: string;
};

export async function listConnections(organizationId: string, origin: string): Promise<ConnectionListRow[]> {
  const rows = await db().samlConnection.findMany({ where: { organizationId }, orderBy: { createdAt: "asc" } });
  return rows.map((r) => {
    const certificates = z.array(z.string()).safeParse(JSON.parse(r.certificates));
    return {
      id: r.id,
      idpEntityId: r.idpEntityId,
      ssoUrl: r.ssoUrl,
      domains: r.domains,
      allowIdpInitiated: r.allowIdpInitiated,
      certificates: (certificates.success ? certificates.data : []).map(describeCertificate),
      metadataUrl: `${origin}${metadataPath(r.id)}`,
      acsUrl: `${origin}${acsPath(r.id)}`,
      signinUrl: `${origin}${startPath(r.id)}`,
    };
  });
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

/** The organization names of SAML identities, by identity id (the account page's "<organization> (company sign-in)"). */
export async function samlIdentityOrganizations(identityIds: string[]): Promise<Map<string, string>> {
  const rows = await db().samlIdentity.findMany({ where: { id: { in: identityIds } }, select: { id: true, connection: { select: { organization: { select: { name: true } } } } } });
  return new Map(rows.map((r) => [r.id, r.connection.organization.name]));
}
