// A user's password row, written from the flows that choose one. Hashing
// and the policy are credentials/'s; this module only stores what they produced.
//
// A reset or a change also ends every pending link and code of the user (sign-in, sign-up, reset,
// address change: VerificationToken rows for the address, or bound to the user; a code lives in
// its link's row) in the same transaction that writes the password, so no link sent before the
// new password can set it again, or sign anyone in.
import { db, type Db } from "../../db/client.server";
import { eventSource, recordEvent } from "./audit.server";
import { notifySecurityChange } from "./security-notices.server";
import { devicesResetAt, wasntMeLinks } from "./wasnt-me.server";
import { clientAddress, type AuthRequest } from "../core/request.server";
import { clearPasswordFailures } from "../core/limits.server";
import { deviceIdFor } from "../core/device-cookie.server";
import { revokeUserSessions } from "../core/session.server";
import type { AuthConfig } from "../core/config.server";

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

/**
 * Whether a stored password is known to meet today's single-factor floor: recorded against this
 * floor or a higher one. Not recorded (null), or recorded against a lower floor: not known.
 */
function meetsSingleFactorFloor(stored: number | null, config: Pick<AuthConfig, "passwordMinLength">): boolean {
  return stored !== null && stored >= config.passwordMinLength;
}

/**
 * Whether the user's password is not known to meet the single-factor floor (ADR 084): shorter, or
 * stored before the floor was recorded. False for a user without a password.
 */
export async function passwordBelowSingleFactorFloor(userId: string, config: Pick<AuthConfig, "passwordMinLength">): Promise<boolean> {
  const row = await db().password.findUnique({ where: { userId }, select: { singleFactorFloorMet: true } });
  return row !== null && !meetsSingleFactorFloor(row.singleFactorFloorMet, config);
}

/**
 * password-set: only for a user without one; false when one exists (or appeared meanwhile).
 * `floorMet`: the single-factor floor the password meets (credentials' singleFactorFloorMet).
 */
export async function createPassword(userId: string, hash: string, floorMet: number): Promise<boolean> {
  try {
    await db().password.create({ data: { userId, hash, singleFactorFloorMet: floorMet } });
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "P2002") return false;
    throw error;
  }
}

/** password-change: replaces the hash only when `previous` is still the stored one (two tabs). */
export async function replacePassword(userId: string, previous: string, hash: string, floorMet: number): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const { count } = await tx.password.updateMany({ where: { userId, hash: previous }, data: { hash, singleFactorFloorMet: floorMet } });
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
export async function applyPasswordReset(ar: AuthRequest, userId: string, hash: string, floorMet: number | null, provedAddress: string | null = null): Promise<void> {
  const singleFactorFloorMet = floorMet;
  await db().$transaction(async (tx) => {
    await tx.password.upsert({ where: { userId }, create: { userId, hash, singleFactorFloorMet }, update: { hash, singleFactorFloorMet } });
    // The code or link came through the address's mailbox: the reset proved it, as a sign-in link
    // does. Only while it is still the account's address (not changed since it was sent).
    if (provedAddress) await tx.user.updateMany({ where: { id: userId, email: provedAddress, emailVerified: null }, data: { emailVerified: new Date() } });
    await endPendingRequests(tx, userId);
  });
  const count = await revokeUserSessions(userId);
  // The wrong passwords that locked the account out were guesses at the old one (ADR 159).
  const email = (await db().user.findUnique({ where: { id: userId }, select: { email: true } }))?.email;
  if (email) {
    const deviceId = await deviceIdFor({ cookies: ar.cookies, secure: ar.secure, secrets: ar.config.secrets }, email, () => devicesResetAt(userId));
    await clearPasswordFailures(ar.config.rateLimits, { address: email, client: clientAddress(ar), deviceId });
  }
  await recordEvent("password-reset", { userId, ...eventSource(ar), detail: { count } });
  await notifySecurityChange(ar, userId, { kind: "password-reset" });
}
