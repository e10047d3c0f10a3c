// The session's user as the layer's own tests expect it: the fields a test knows (id, name, email,
// image) and whatever app/auth.config.ts's session({ user }) adds. An app that adds claims keeps
// the layer's tests passing, and without session({ user }) the comparison stays exact: no field
// the layer did not mean to send goes unnoticed. docs/testing.md
import { expect } from "vitest";
import { hasSessionExtras, sessionExtrasFor } from "../../app/auth/core/app-config.server.ts";
import { testDb } from "./db.ts";

type Known = { email: string } & Record<string, unknown>;

/**
 * What the session's user of the user `known.email` is: `known`, plus the claims session({ user })
 * of app/auth.config.ts gives for their row (read from the test database), exactly.
 */
export async function sessionUserOf(known: Known): Promise<Record<string, unknown>> {
  if (!hasSessionExtras()) return known;
  const row = await testDb().user.findUniqueOrThrow({ where: { email: known.email } });
  return { ...sessionExtrasFor(row), ...known };
}

/**
 * The same for a test that cannot read the user's row (a browser test's server has its own
 * database): exactly `known` without session({ user }); with it, `known` and any claims beside.
 */
export function sessionUserLike(known: Record<string, unknown>): unknown {
  return hasSessionExtras() ? expect.objectContaining(known) : known;
}
