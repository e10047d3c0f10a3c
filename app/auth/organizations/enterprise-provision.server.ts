// Who an enterprise connection's answer signs in (ADR 155 for SAML, ADR 164 for OpenID Connect):
// the rule every connection kind shares. The person is keyed by (connection, subject), never by
// the address alone. A first sign-in creates the account and its membership (just in time); an
// existing account with the same address is linked only when its owner, signed in to it, started
// this very sign-in; an address outside the connection's domains verified by its organization is
// refused before any account is looked up. What differs per kind is only where its identities
// live and how its session's credentialRef is written: an IdentityStore.
import { db } from "../../db/client.server";
import { toSessionUser, type SignInResult } from "../accounts/users.server";
import { sanitizeName } from "../core/display-text";
import { recordOrgEvent } from "./audit.server";
import type { OrgRole } from "./roles";

export type ProvisionRefusal = "no-address" | "foreign-domain" | "not-linked";
export type Provisioned = { ok: true; result: SignInResult } | { ok: false; reason: ProvisionRefusal };

export type AssertedPerson = { subject: string; email: string | null; name: string | null };

/** What provisioning reads of a connection, whatever its kind. */
export type EnterpriseConnection = { id: string; organizationId: string; domains: string[]; defaultRole: OrgRole };

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];
type Client = ReturnType<typeof db> | Tx;

/** Where one connection kind keeps its identities, and how a session names the one it used. */
export type IdentityStore = {
  /** The audit event's `via` ("saml", "oidc"). */
  via: string;
  find(client: Client, connectionId: string, subject: string): Promise<{ id: string; userId: string } | null>;
  create(client: Client, data: { connectionId: string; subject: string; userId: string }): Promise<{ id: string }>;
  /** The session's credentialRef for an identity: `<prefix>:<identityId>`. */
  credentialRef(identityId: string): string;
};

export function domainOf(email: string): string | null {
  const at = email.lastIndexOf("@");
  return at > 0 && at < email.length - 1 ? email.slice(at + 1) : null;
}

/** Whether `email` is on one of the connection's domains that its organization verified (now). */
export async function onVerifiedDomain(connection: EnterpriseConnection, email: string): Promise<boolean> {
  const domain = domainOf(email);
  if (!domain || !connection.domains.includes(domain)) return false;
  const verified = await db().organizationDomain.findFirst({
    where: { organizationId: connection.organizationId, verifiedDomain: domain, state: "verified" },
    select: { id: true },
  });
  return verified !== null;
}

async function ensureMembership(connection: EnterpriseConnection, store: IdentityStore, userId: string, email: string): Promise<void> {
  const existing = await db().membership.findFirst({ where: { organizationId: connection.organizationId, userId }, select: { id: true } });
  if (existing) return;
  await db().$transaction(async (tx) => {
    await tx.membership.create({ data: { organizationId: connection.organizationId, userId, role: connection.defaultRole } });
    await recordOrgEvent(tx, connection.organizationId, { userId, email, ip: null }, "member-added", { via: store.via, connectionId: connection.id, role: connection.defaultRole });
  });
}

/**
 * The account an answer of `connection` signs in. `startedBy`: the user who was signed in when
 * this sign-in started (kept by the connection kind with the request), the only one whose account
 * may be linked.
 */
export async function provisionPerson(store: IdentityStore, connection: EnterpriseConnection, person: AssertedPerson, startedBy: string | null): Promise<Provisioned> {
  const email = person.email?.trim().toLowerCase() || null;
  if (!email) return { ok: false, reason: "no-address" };
  if (!(await onVerifiedDomain(connection, email))) return { ok: false, reason: "foreign-domain" };

  const known = await store.find(db(), connection.id, person.subject);
  if (known) {
    const user = await db().user.findUnique({ where: { id: known.userId } });
    if (user) {
      await ensureMembership(connection, store, user.id, email);
      return { ok: true, result: { user: toSessionUser(user), isNewUser: false, credentialRef: store.credentialRef(known.id) } };
    }
  }

  const existing = await db().user.findUnique({ where: { email } });
  if (existing) {
    if (existing.id !== startedBy) return { ok: false, reason: "not-linked" };
    const linked = await store.create(db(), { connectionId: connection.id, subject: person.subject, userId: existing.id });
    await ensureMembership(connection, store, existing.id, email);
    return { ok: true, result: { user: toSessionUser(existing), isNewUser: false, credentialRef: store.credentialRef(linked.id) } };
  }

  const created = await db().$transaction(async (tx) => {
    // Not typed by the person: made safe by the one name rule, never a refused sign-in.
    const user = await tx.user.create({ data: { email, name: sanitizeName(person.name), emailVerified: new Date() } });
    const made = await store.create(tx, { connectionId: connection.id, subject: person.subject, userId: user.id });
    await tx.membership.create({ data: { organizationId: connection.organizationId, userId: user.id, role: connection.defaultRole } });
    await recordOrgEvent(tx, connection.organizationId, { userId: user.id, email, ip: null }, "member-added", { via: store.via, connectionId: connection.id, role: connection.defaultRole });
    return { user, identityId: made.id };
  });
  return { ok: true, result: { user: toSessionUser(created.user), isNewUser: true, credentialRef: store.credentialRef(created.identityId) } };
}
