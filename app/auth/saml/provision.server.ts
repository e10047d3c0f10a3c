// Who an accepted assertion signs in (ADR 155): the person is keyed by (connection, NameID), never
// by the address alone. A first sign-in creates the account and its membership (just in time); an
// existing account with the same address is linked only when its owner, signed in to it, started
// this very sign-in; an address outside the connection's domains verified by its organization is
// refused before any account is looked up.
import { db } from "../../db/client.server";
import { toSessionUser, type SignInResult } from "../accounts/users.server";
import { recordOrgEvent } from "../organizations/audit.server";
import type { SamlConnectionRow } from "./connections.server";
import { SAML_CREDENTIAL_PREFIX } from "./paths";

export type ProvisionRefusal = "no-address" | "foreign-domain" | "not-linked";
export type Provisioned = { ok: true; result: SignInResult } | { ok: false; reason: ProvisionRefusal };

export type AssertedPerson = { subject: string; email: string | null; name: string | null };

function domainOf(email: string): string | null {
  const at = email.lastIndexOf("@");
  return at > 0 && at < email.length - 1 ? email.slice(at + 1) : null;
}

/** Whether `email` is on one of the connection's domains that its organization verified (now). */
async function onVerifiedDomain(connection: SamlConnectionRow, email: string): Promise<boolean> {
  const domain = domainOf(email);
  if (!domain || !connection.domains.includes(domain)) return false;
  const verified = await db().organizationDomain.findFirst({
    where: { organizationId: connection.organizationId, verifiedDomain: domain, state: "verified" },
    select: { id: true },
  });
  return verified !== null;
}

async function ensureMembership(connection: SamlConnectionRow, userId: string, email: string): Promise<void> {
  const existing = await db().membership.findFirst({ where: { organizationId: connection.organizationId, userId }, select: { id: true } });
  if (existing) return;
  await db().$transaction(async (tx) => {
    await tx.membership.create({ data: { organizationId: connection.organizationId, userId, role: connection.defaultRole } });
    await recordOrgEvent(tx, connection.organizationId, { userId, email, ip: null }, "member-added", { via: "saml", connectionId: connection.id, role: connection.defaultRole });
  });
}

/**
 * The account an assertion of `connection` signs in. `startedBy`: the user who was signed in when
 * this sign-in started (from the stored request), the only one whose account may be linked.
 */
export async function provisionPerson(connection: SamlConnectionRow, person: AssertedPerson, startedBy: string | null): Promise<Provisioned> {
  const email = person.email?.trim().toLowerCase() || null;
  if (!email) return { ok: false, reason: "no-address" };
  if (!(await onVerifiedDomain(connection, email))) return { ok: false, reason: "foreign-domain" };

  const identity = await db().samlIdentity.findUnique({ where: { connectionId_subject: { connectionId: connection.id, subject: person.subject } }, include: { user: true } });
  if (identity) {
    await ensureMembership(connection, identity.userId, email);
    return { ok: true, result: { user: toSessionUser(identity.user), isNewUser: false, credentialRef: `${SAML_CREDENTIAL_PREFIX}${identity.id}` } };
  }

  const existing = await db().user.findUnique({ where: { email } });
  if (existing) {
    if (existing.id !== startedBy) return { ok: false, reason: "not-linked" };
    const linked = await db().samlIdentity.create({ data: { connectionId: connection.id, subject: person.subject, userId: existing.id } });
    await ensureMembership(connection, existing.id, email);
    return { ok: true, result: { user: toSessionUser(existing), isNewUser: false, credentialRef: `${SAML_CREDENTIAL_PREFIX}${linked.id}` } };
  }

  const created = await db().$transaction(async (tx) => {
    const user = await tx.user.create({ data: { email, name: person.name, emailVerified: new Date() } });
    const made = await tx.samlIdentity.create({ data: { connectionId: connection.id, subject: person.subject, userId: user.id } });
    await tx.membership.create({ data: { organizationId: connection.organizationId, userId: user.id, role: connection.defaultRole } });
    await recordOrgEvent(tx, connection.organizationId, { userId: user.id, email, ip: null }, "member-added", { via: "saml", connectionId: connection.id, role: connection.defaultRole });
    return { user, identityId: made.id };
  });
  return { ok: true, result: { user: toSessionUser(created.user), isNewUser: true, credentialRef: `${SAML_CREDENTIAL_PREFIX}${created.identityId}` } };
}
