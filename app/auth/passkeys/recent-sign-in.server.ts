// Adding a passkey adds a way in that skips the second factor and outlives "sign out everywhere"
// and a new password (ADR 042). So only a browser that signed in moments ago may add one: a
// session cookie taken from someone's browser cannot be turned into a lasting way into their
// account. The same window decides when /account offers a passkey right after a sign-in.
import { db } from "../../db/client.server";
import type { CurrentSession } from "../core/session.server";

/** How long after a sign-in its session may add a passkey (and is offered one). */
export const PASSKEY_REGISTRATION_WINDOW_MS = 10 * 60 * 1000;

/** Whether a sign-in at `signedInAt` is recent enough to add a passkey. */
export function isRecentSignIn(signedInAt: Date | null, now = new Date()): boolean {
  return signedInAt !== null && now.getTime() - signedInAt.getTime() < PASSKEY_REGISTRATION_WINDOW_MS;
}

/** The session's sign-in time (its row's creation); null for a cookie that names no session row. */
async function signedInAt(session: CurrentSession, now: Date): Promise<Date | null> {
  if (!session.sessionId) return null;
  const row = await db().session.findFirst({
    where: { id: session.sessionId, userId: session.userId, revokedAt: null, expires: { gt: now } },
    select: { createdAt: true },
  });
  return row?.createdAt ?? null;
}

export async function mayRegisterPasskey(session: CurrentSession, now = new Date()): Promise<boolean> {
  return isRecentSignIn(await signedInAt(session, now), now);
}
