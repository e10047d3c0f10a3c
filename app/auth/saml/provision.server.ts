// Who an accepted assertion signs in (ADR 155): the rule every connection kind shares
// (organizations/enterprise-provision.server.ts), with SAML's identities (SamlIdentity rows) and
// its sessions' credentialRef `saml:<identityId>` (requireSso reads that prefix).
import { provisionPerson as provision, type AssertedPerson, type IdentityStore, type Provisioned } from "../organizations/enterprise-provision.server";
import type { SamlConnectionRow } from "./connections.server";

export type { AssertedPerson, Provisioned, ProvisionRefusal } from "../organizations/enterprise-provision.server";

const samlIdentities: IdentityStore = {
  via: "saml",
  find: (client, connectionId, subject) => client.samlIdentity.findUnique({ where: { connectionId_subject: { connectionId, subject } }, select: { id: true, userId: true } }),
  create: (client, data) => client.samlIdentity.create({ data, select: { id: true } }),
  credentialRef: (identityId) => `saml:${identityId}`,
};

export function provisionPerson(connection: SamlConnectionRow, person: AssertedPerson, startedBy: string | null): Promise<Provisioned> {
  return provision(samlIdentities, connection, person, startedBy);
}
