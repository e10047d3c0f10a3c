// What a user may do beyond their own account (ADR 077, docs/build-your-app.md): a role on the user row,
// read from the database at each check — a change applies at the next request, with no session
// to re-issue.
import { db, dbProvider } from "../../db/client.server";

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

/** Transaction-scoped advisory lock on PostgreSQL: role changes and deletions one at a time. */
const PG_ROLE_LOCK_KEY = 7_707_077;

// The roles: `user`, `admin` and the app's own, with what each may do (app/auth.config.ts).
export { isRole, roleGrants, roleNames, type Permission, type Role } from "../core/app-config.server";

/** Whether this user exists, is an admin and is not disabled. */
export async function isAdmin(userId: string): Promise<boolean> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { role: true, disabledAt: true } });
  return user?.role === "admin" && user.disabledAt === null;
}

/**
 * Takes the lock every change that can remove an administrator holds until its commit (a
 * demotion, a deletion), so the last-admin check and the change are one step: of two at once, the
 * second waits and then sees the first's commit. PostgreSQL: an advisory transaction lock (its
 * READ COMMITTED reads after it see what the holder committed). SQLite: the database's write lock,
 * taken by a write first (a transaction begins as a reader, and two readers that both go on to
 * write would have checked the same state), so another process (the command line) waits too.
 */
export async function holdRoleLock(tx: Tx, userId: string): Promise<void> {
  if (dbProvider() === "postgres") await tx.$queryRawUnsafe("SELECT 1 AS locked FROM pg_advisory_xact_lock($1)", PG_ROLE_LOCK_KEY);
  else await tx.$executeRawUnsafe('UPDATE "User" SET "role" = "role" WHERE "id" = ?', userId);
}

/** Inside a transaction holding holdRoleLock: whether this user is an admin and no other user is. */
export async function isLastAdminIn(tx: Tx, userId: string): Promise<boolean> {
  const user = await tx.user.findUnique({ where: { id: userId }, select: { role: true } });
  if (user?.role !== "admin") return false;
  return (await tx.user.count({ where: { role: "admin", id: { not: userId } } })) === 0;
}
