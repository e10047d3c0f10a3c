// A user's password row, written from the flows that choose one (contract section 15). Hashing
// and the policy are credentials/'s; this module only stores what they produced.
//
// A reset or a change also ends every pending link and code of the user (sign-in, sign-up, reset,
// address change: VerificationToken rows for the address, or bound to the user; a code lives in
// its link's row) in the same transaction that writes the password, so no link sent before the
// new password can set it again, or sign anyone in.
import { db, type Db } from "../../db/client.server";
import { eventSource, recordEvent } from "./audit.server";
import { notifySecurityChange } from "./security-notices.server";
import { wasntMeLinks } from "./wasnt-me.server";
import type { AuthRequest } from "../core/request.server";
import { revokeUserSessions } from "../core/session.server";

type Tx = Pick<Db, "verificationToken" | "user" | "password">;

async function endPendingRequests(tx: Tx, userId: string): Promise<void> {
  const user = await tx.user.findUnique({ where: { id: userId }, select: { email: true } });
  // Not the security e-mails' "This wasn't me" links (ADR 081): a thief who changes the password
  // must not take the owner's way to report it with the old one.
  await tx.verificationToken.deleteMany({ where: { OR: [{ userId }, ...(user?.email ? [{ identifier: user.email }] : [])], NOT: wasntMeLinks() } });
}

/** The stored hash, or null when the user has no password. */
export async function passwordHashOf(userId: string): Promise<string | null> {
  return (await db().password.findUnique({ where: { userId }, select: { hash: true } }))?.hash ?? null;
}

/** password-set: only for a user without one; false when one exists (or appeared meanwhile). */
export async function createPassword(userId: string, hash: string): Promise<boolean> {
  try {
    await db().password.create({ data: { userId, hash } });
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "P2002") return false;
    throw error;
  }
}

/** password-change: replaces the hash only when `previous` is still the stored one (two tabs). */
export async function replacePassword(userId: string, previous: string, hash: string): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const { count } = await tx.password.updateMany({ where: { userId, hash: previous }, data: { hash } });
    if (count !== 1) return false;
    await endPendingRequests(tx, userId);
    return true;
  });
}

/**
 * A reset, once the mailbox (and, when on, the second factor: ADR 062) is proved: the password
 * written and every pending link and code ended in one transaction, then every session of the
 * user ended on every instance.
 */
export async function applyPasswordReset(ar: AuthRequest, userId: string, hash: string): Promise<void> {
  await db().$transaction(async (tx) => {
    await tx.password.upsert({ where: { userId }, create: { userId, hash }, update: { hash } });
    await endPendingRequests(tx, userId);
  });
  await revokeUserSessions(userId);
  await recordEvent("password-reset", { userId, ...eventSource(ar) });
  await notifySecurityChange(ar, userId, { kind: "password-reset" });
}
