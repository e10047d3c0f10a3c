// Who runs an account operation: the operator's command line, or a signed-in admin
// through /admin. Every operation writes an audit event naming it.

export type Actor =
  | { source: "cli" }
  | { source: "admin"; adminId: string; ip: string | null; userAgent: string | null }
  // The user themself (deleting their own account): no client address is kept of a deleted user.
  // `session`: the digest of the session cookie that asked (sessionCookieDigest), so a second post
  // of the same click, whose session is gone, is still answered with the deletion (not a secret:
  // a hash of a high-entropy token, as Session.tokenHash keeps).
  | { source: "self"; session?: string | null }
  // An organization's directory through a SCIM token (docs/features/scim.md): deprovisioning.
  | { source: "scim"; organizationId: string; tokenId: string };

/** The audit fields an actor adds to an event about `userId`. */
export function actorEventFields(actor: Actor, userId: string, detail: Record<string, unknown>) {
  if (actor.source === "self" && actor.session) return { userId, detail: { ...detail, source: "self", session: actor.session } };
  if (actor.source === "scim") return { userId, detail: { ...detail, source: "scim", organizationId: actor.organizationId, tokenId: actor.tokenId } };
  if (actor.source !== "admin") return { userId, detail: { ...detail, source: actor.source } };
  return { userId, ip: actor.ip, userAgent: actor.userAgent, detail: { ...detail, source: "admin", adminId: actor.adminId } };
}

/** Whether someone other than the owner acted (an admin, the command line): what the owner is told names no device of theirs. */
export function isOperator(actor: Actor): boolean {
  return actor.source !== "self";
}
