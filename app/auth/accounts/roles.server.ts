// What a user may do beyond their own account (contract §18, ADR 077): a role on the user row,
// read from the database at each check — a change applies at the next request, with no session
// to re-issue.
import { db } from "../../db/client.server";

export const ROLES = ["user", "admin"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return (ROLES as readonly unknown[]).includes(value);
}

/** Whether this user exists, is an admin and is not disabled. */
export async function isAdmin(userId: string): Promise<boolean> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { role: true, disabledAt: true } });
  return user?.role === "admin" && user.disabledAt === null;
}
