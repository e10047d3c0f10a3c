// A user's password row, written from the flows that choose one (contract section 15). Hashing
// and the policy are credentials/'s; this module only stores what they produced.
import { db } from "../../db/client.server";

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
  const { count } = await db().password.updateMany({ where: { userId, hash: previous }, data: { hash } });
  return count === 1;
}
