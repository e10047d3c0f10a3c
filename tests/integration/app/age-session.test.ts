// tests/support/age-session.ts, the browser tests' way to age a sign-in (docs/testing.md): it
// writes the app's own database by its data folder or DATABASE_URL, and requireRecentAuth then
// asks for a new sign-in — on SQLite and on PostgreSQL.
import { beforeEach, expect, it } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import * as profile from "../../../app/routes/examples/profile.tsx";
import { ageSessionsOf } from "../../support/age-session.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { callRoute, CookieJar, get, post } from "../../support/http.ts";

beforeEach(() => resetDatabase());

/** The example profile form (requireRecentAuth, maxAge 600) sent with the jar: its status. */
async function confirmStatus(jar: CookieJar): Promise<number> {
  const page = await callRoute(profile.loader, get("/examples/profile", { jar }));
  jar.apply(page);
  const { csrfToken } = (await page.json()) as { csrfToken: string };
  const res = await callRoute(profile.action, post("/examples/profile", { csrfToken }, { jar, headers: { accept: "application/json" } })).catch((thrown: unknown) => thrown as Response);
  return res.status;
}

it(`moves a user's sign-in into the past in the app's database, found by its data folder or DATABASE_URL (${dbLabel})`, async () => {
  await createUser("ada@example.com");
  await createUser("grace@example.com");
  const { jar } = await signIn(new CookieJar(), "ada@example.com");
  const { jar: grace } = await signIn(new CookieJar(), "grace@example.com");
  expect(await confirmStatus(jar)).toBe(200);
  const { dataDir, databaseUrl } = getConfig();
  expect(await ageSessionsOf({ dataDir, env: { DATABASE_URL: databaseUrl ?? undefined } }, "ada@example.com", 11)).toBe(1);
  expect(await confirmStatus(jar)).toBe(403);
  expect(await confirmStatus(grace)).toBe(200);
  expect(await ageSessionsOf({ dataDir, env: { DATABASE_URL: databaseUrl ?? undefined } }, "ada@example.com", 0)).toBe(1);
  expect(await confirmStatus(jar)).toBe(200);
});
