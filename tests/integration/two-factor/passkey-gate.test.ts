// A passkey is exempt from the second factor (ADR 043), so adding one is as good as turning the
// second factor off for every later sign-in: with it on, only a session that itself proved it may
// add a passkey (ADR 045). Attacker: a session from before the factor was turned on (the password
// alone) must not mint a passkey that then signs in without a code. Owner: a session that passed
// the code adds passkeys as before; so does anyone without a second factor.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as optionsRoute from "../../../app/routes/auth/webauthn-options";
import * as sessionRoute from "../../../app/routes/auth/session";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { SoftwareAuthenticator } from "../../support/passkey-authenticator.ts";
import { codeAt, enrolled, firstFactor, submitCode, useStepClock } from "./helpers.ts";

beforeEach(async () => {
  await resetDatabase();
  await createUser();
  useStepClock();
});
afterEach(() => {
  vi.useRealTimers();
});

async function options(jar: CookieJar, action?: string) {
  const res = await callRoute(optionsRoute.loader, get(`/auth/webauthn-options/passkey${action ? `?action=${action}` : ""}`, { jar }), { provider: "passkey" });
  jar.apply(res);
  return { res, body: (await res.json()) as { action: string; options: any; error?: string } };
}

async function answer(jar: CookieJar, action: string, data: unknown, extra: Record<string, string> = {}) {
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/passkey", { csrfToken, action, data: JSON.stringify(data), ...extra }, { jar }),
    { provider: "passkey" },
  );
  jar.apply(res);
  return res;
}

async function sessionOf(jar: CookieJar) {
  return (await (await callRoute(sessionRoute.loader, get("/auth/session", { jar }))).json()) as { user: { email: string } } | null;
}

describe(`adding a passkey while the second factor is on (${dbLabel})`, () => {
  it("a password-only session (signed in before the factor was on) cannot add a passkey, so no passkey sign-in skips the code", async () => {
    const { jar: passwordOnly } = await enrolled();
    const authenticator = new SoftwareAuthenticator();
    // The options were fetched before (or the attacker builds an answer anyway): registration itself refuses.
    const { body } = await options(passwordOnly, "register");
    const res = await answer(passwordOnly, "register", body.options ? authenticator.register(body.options) : {});
    expect(res).toHaveErrorRedirect("SessionRequired");
    expect(await testDb().passkey.count()).toBe(0);

    // And so a passkey sign-in has nothing to use.
    const fresh = new CookieJar();
    const auth = await options(fresh);
    await answer(fresh, "authenticate", authenticator.authenticate(auth.body.options), { callbackUrl: "/account" });
    expect(await sessionOf(fresh)).toBeNull();
  });

  it("its options are refused too, before the browser asks the person for anything", async () => {
    const { jar: passwordOnly } = await enrolled();
    const { res, body } = await options(passwordOnly, "register");
    expect(res.status).toBe(401);
    expect(body.options).toBeUndefined();
  });

  it("the owner's session that passed the code adds a passkey, which then signs in without a code", async () => {
    const { secret } = await enrolled();
    const jar = new CookieJar();
    await firstFactor(jar);
    await submitCode(jar, codeAt(secret));
    const authenticator = new SoftwareAuthenticator();
    const { body } = await options(jar, "register");
    expect(await answer(jar, "register", authenticator.register(body.options))).toHaveRedirect("/account");
    expect(await testDb().passkey.count()).toBe(1);
    const fresh = new CookieJar();
    const auth = await options(fresh);
    await answer(fresh, "authenticate", authenticator.authenticate(auth.body.options), { callbackUrl: "/account" });
    expect((await sessionOf(fresh))?.user.email).toBe("ada@example.com");
  });

  it("without a second factor, a password session adds a passkey as before", async () => {
    const { jar } = await signIn();
    const { body } = await options(jar, "register");
    expect(await answer(jar, "register", new SoftwareAuthenticator().register(body.options))).toHaveRedirect("/account");
    expect(await testDb().passkey.count()).toBe(1);
  });
});
