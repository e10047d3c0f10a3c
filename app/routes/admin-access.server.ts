// requireAdmin for app routes (contract §18, ADR 077): the /admin pages call it first in every
// loader and action. Anyone who is not a signed-in admin — signed out, a plain user, a user whose
// role was just taken away — gets the very 404 page an unknown URL gets (routes/not-found.tsx),
// never a 403 or a sign-in redirect, so /admin does not show that it exists.
import { data } from "react-router";
import { isAdmin } from "~/auth/accounts/roles.server";
import { optionalSession } from "~/auth/core";

export type AdminSession = { userId: string; headers: Headers };

/** The signed-in admin, or a thrown 404 (the ordinary not-found page). */
export async function requireAdmin(request: Request): Promise<AdminSession> {
  const { session, headers } = await optionalSession(request);
  if (!session || !(await isAdmin(session.userId))) throw data("Not found", { status: 404 });
  return { userId: session.userId, headers };
}
