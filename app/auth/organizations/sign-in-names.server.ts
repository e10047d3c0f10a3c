// How the account page names a sign-in through an organization's connection — SAML (ADR 155) or
// an OpenID Connect connection of an organization — as "<organization> (company sign-in)" in the
// reader's language, never "saml" or a provider id (ADR 167). The organization is read through the
// connection that the session's credentialRef names ("<method>:<identity id>"); when the
// connection is gone, the page says only "company sign-in".
import { connectionKind, isConnectionMethod } from "./connections.server";

/** Whether a session or event method is a sign-in through an organization's connection (a registered kind). */
export function isOrganizationSignIn(method: string | null | undefined): boolean {
  return isConnectionMethod(method);
}

/** credentialRef → organization name, for the refs of organization sign-ins among `refs` (others ignored). */
export async function organizationSignInNames(refs: readonly (string | null | undefined)[]): Promise<Map<string, string>> {
  const byKind = new Map<string, Set<string>>();
  for (const ref of refs) {
    if (!ref) continue;
    const colon = ref.indexOf(":");
    const kind = colon > 0 ? ref.slice(0, colon) : "";
    if (!isConnectionMethod(kind)) continue;
    const ids = byKind.get(kind) ?? new Set<string>();
    ids.add(ref.slice(colon + 1));
    byKind.set(kind, ids);
  }
  const names = new Map<string, string>();
  for (const [kind, ids] of byKind) {
    const reader = connectionKind(kind)?.organizationNames;
    if (!reader) continue;
    for (const [id, name] of await reader([...ids])) names.set(`${kind}:${id}`, name);
  }
  return names;
}
