// How the account page names a sign-in through an organization's connection — SAML (ADR 155) or
// an OpenID Connect connection of an organization — as "<organization> (company sign-in)" in the
// reader's language, never "saml" or a provider id (ADR 167). The organization is read through the
// connection that the session's credentialRef names ("<method>:<identity id>"); when the
// connection is gone, the page says only "company sign-in".
import { db } from "../../db/client.server";

/** Session methods that are an organization's connection; each credentialRef is "<method>:<identity id>". */
export const ORGANIZATION_SIGN_IN_METHODS: readonly string[] = ["saml", "oidc-connection"];

export function isOrganizationSignIn(method: string | null | undefined): boolean {
  return typeof method === "string" && ORGANIZATION_SIGN_IN_METHODS.includes(method);
}

/** Identity ids of one kind → the name of the organization whose connection the identity belongs to. */
type NameReader = (identityIds: string[]) => Promise<Map<string, string>>;

const READERS: Record<string, NameReader> = {
  saml: async (ids) => {
    const rows = await db().samlIdentity.findMany({ where: { id: { in: ids } }, select: { id: true, connection: { select: { organization: { select: { name: true } } } } } });
    return new Map(rows.map((r) => [r.id, r.connection.organization.name]));
  },
  // OpenID Connect connections of organizations: their identities are read here the same way once
  // that table exists; until then such a session is named by the fallback words.
  "oidc-connection": async () => new Map(),
};

/** credentialRef → organization name, for the refs of organization sign-ins among `refs` (others ignored). */
export async function organizationSignInNames(refs: readonly (string | null | undefined)[]): Promise<Map<string, string>> {
  const byKind = new Map<string, Set<string>>();
  for (const ref of refs) {
    if (!ref) continue;
    const colon = ref.indexOf(":");
    const kind = colon > 0 ? ref.slice(0, colon) : "";
    if (!isOrganizationSignIn(kind) || !READERS[kind]) continue;
    const ids = byKind.get(kind) ?? new Set<string>();
    ids.add(ref.slice(colon + 1));
    byKind.set(kind, ids);
  }
  const names = new Map<string, string>();
  for (const [kind, ids] of byKind) {
    for (const [id, name] of await READERS[kind]!([...ids])) names.set(`${kind}:${id}`, name);
  }
  return names;
}
