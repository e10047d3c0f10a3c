// The test docs/build-your-app.md quotes: a loader and an action of the app's own page
// (app/routes/examples/profile.tsx) called with real requests, real cookies and a real database.
import { beforeEach, expect, it } from "vitest";
import * as profile from "~/routes/examples/profile";
import { createUser, signIn } from "../../support/auth";
import { resetDatabase } from "../../support/db";
import { callRoute, CookieJar, get, post } from "../../support/http";

beforeEach(() => resetDatabase());

it("sends a signed-out visitor to sign in, and back to the page after", async () => {
  const res = await callRoute(profile.loader, get("/examples/profile"));
  expect(res).toHaveRedirect("/auth/signin?error=SessionRequired&callbackUrl=%2Fexamples%2Fprofile");
});

it("shows the page to a signed-in user, and takes their form", async () => {
  await createUser("ada@example.com", "Ada");
  const { jar } = await signIn(new CookieJar(), "ada@example.com");
  const page = await callRoute(profile.loader, get("/examples/profile", { jar }));
  jar.apply(page); // the form's CSRF cookie
  const { email, csrfToken } = await page.json();
  expect(email).toBe("ada@example.com");
  const sent = await callRoute(profile.action, post("/examples/profile", { csrfToken }, { jar }));
  expect(await sent.json()).toEqual({ confirmed: true });
});
