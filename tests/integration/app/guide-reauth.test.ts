// docs/features/account-protection.md quotes this test: a route guarded by requireRecentAuth, a
// test session aged past its window, and the re-authentication page walked back to the route.
import { beforeEach, expect, it } from "vitest";
import * as profile from "~/routes/examples/profile";
import { createUser, PASSWORD, signIn } from "../../support/auth";
import { resetDatabase } from "../../support/db";
import { callRoute, get, post } from "../../support/http";
import { ageSession, reauthenticate } from "../../support/reauth";

beforeEach(() => resetDatabase());

/** POSTs the example profile form (requireRecentAuth with maxAge 600) with the jar. */
async function confirm(jar: Parameters<typeof ageSession>[0]): Promise<Response> {
  const page = await callRoute(profile.loader, get("/examples/profile", { jar }));
  jar.apply(page);
  const { csrfToken } = (await page.json()) as { csrfToken: string };
  return callRoute(profile.action, post("/examples/profile", { csrfToken }, { jar, headers: { accept: "application/json" } }));
}

it("ages a signed-in test session past the route's window, and signs in again", async () => {
  await createUser("ada@example.com");
  const { jar } = await signIn();
  await ageSession(jar, 11); // the sign-in is now 11 minutes old: the route answers 403 ReauthRequired
  const refused = await confirm(jar).catch((thrown: unknown) => thrown as Response);
  expect(refused.status).toBe(403);
  expect(await reauthenticate(jar, { password: PASSWORD }, { callbackUrl: "/examples/profile" })).toHaveRedirect("/examples/profile");
  // recent again (under a new session id): the route lets it through
  expect(await (await confirm(jar)).json()).toEqual({ confirmed: true });
});
