// A password set by an operator (`npm run user:add`): a new user is created with it;
// an existing user's password is replaced as a password change replaces it — every session of
// theirs ends on every instance, the change is audited with the actor, and the owner gets the
// same security e-mail (ADR 059), saying an administrator made the change.
import { actorEventFields, type Actor } from "../accounts/actor";
import { recordEvent } from "../accounts/audit.server";
import { notifySecurityChange } from "../accounts/security-notices.server";
import type { AuthRequest } from "../core/request.server";
import { revokeUserSessions } from "../core/session.server";
import { upsertCredentialsUser } from "../credentials/users.server";

export async function setPasswordAsOperator(ar: AuthRequest, input: { email: string; password: string; name?: string }, actor: Actor) {
  const result = await upsertCredentialsUser(input);
  if (result.created) return { ...result, sessionsEnded: 0 };
  const userId = result.user.id;
  const sessionsEnded = await revokeUserSessions(userId);
  await recordEvent("password-changed", actorEventFields(actor, userId, { count: sessionsEnded }));
  await notifySecurityChange(ar, userId, { kind: "password-changed" }, { byOperator: true });
  return { ...result, sessionsEnded };
}
