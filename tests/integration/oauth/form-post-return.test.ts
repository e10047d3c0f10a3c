// A form_post answer (Apple's way, or any provider asked for response_mode=form_post) is a
// cross-site POST, which a browser sends without its SameSite=Lax cookies — the session's too.
// Linking a provider from a signed-in browser must still link to that browser's user: the
// callback sends such an answer on as a GET (303), which carries the Lax cookies, and only then
// checks it. Here the browser's cookie rules are played by hand: the cross-site POST goes without
// the session cookie, the GET that follows with every cookie.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { toSessionUser } from "../../../app/auth/accounts/users.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { createSession } from "../../../app/auth/core/session.server.ts";
import { upsertCredentialsUser } from "../../../app/auth/credentials/users.server.ts";
import * as callbackRoute from "../../../app/routes/auth/callback.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, ORIGIN, post } from "../../support/http.ts";
import { ALICE, BOB, startTestIdp, visitIdp, type TestIdp } from "../../support/idp.ts";
import { authorizationUrlOf, deliver, sessionOf, startSignIn } from "../../support/oauth-flow.ts";

let idp: TestIdp;

beforeAll(async () => {
  idp = await startTestIdp();
  idp.configure();
});
afterAll(() => idp?.stop());
beforeEach(() => resetDatabase());

const SESSION = /^authjs\.session-token/;

/** The jar's cookies a browser sends with a cross-site POST: only the SameSite=None ones (the check cookies of a form_post flow). */
function crossSiteCookies(jar: CookieJar): CookieJar {
  const sent = new CookieJar();
  for (const name of jar.names()) if (/^authjs\.(state|pkce\.code_verifier|nonce)$/.test(name)) sent.set(name, jar.get(name)!);
  return sent;
}

async function formPostAnswer(jar: CookieJar, user: { email: string; password: string }) {
  const start = await startSignIn(jar, "oidc", { query: "?response_mode=form_post", callbackUrl: "/account" });
  const answer = await visitIdp(await authorizationUrlOf(start), user);
  if (answer.kind !== "form_post") throw new Error("expected a form_post answer");
  return answer;
}

/** The provider's page POSTs the answer from its own site: no Lax cookies, Sec-Fetch-Site cross-site. */
function crossSitePost(jar: CookieJar, answer: { action: string; fields: Record<string, string> }) {
  const url = new URL(answer.action);
  return callRoute(callbackRoute.action, post(url.pathname, answer.fields, { jar: crossSiteCookies(jar), headers: { Origin: idp.issuer, "Sec-Fetch-Site": "cross-site" } }), { provider: "oidc" });
}

describe(`form_post answers to a signed-in browser (${dbLabel})`, () => {
  test("linking from a signed-in browser: the cross-site POST is sent on as a GET, which links the account to the signed-in user", async () => {
    const { user } = await upsertCredentialsUser({ email: "carol@example.com", password: "carol-password-long" });
    const jar = new CookieJar();
    jar.apply(await createSession(authRequest(get("/")), toSessionUser(user)));
    const answer = await formPostAnswer(jar, BOB);

    const bounce = await crossSitePost(jar, answer);
    expect(bounce.status).toBe(303);
    expect(bounce.headers.getSetCookie()).toEqual([]);
    const location = new URL(bounce.headers.get("Location")!);
    expect(location.origin + location.pathname).toBe(`${ORIGIN}/auth/callback/oidc`);
    expect(location.searchParams.get("code")).toBe(answer.fields.code);
    expect(location.searchParams.get("state")).toBe(answer.fields.state);
    expect(await testDb().account.count()).toBe(0);

    // The top-level GET carries every cookie, the session's included.
    const res = await deliver(jar, { kind: "redirect", url: location.href });
    expect(res).toHaveRedirect(`${ORIGIN}/account`);
    expect(await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } })).toMatchObject({ userId: user.id, providerAccountId: BOB.sub });
    expect((await sessionOf(jar))?.user.email).toBe("carol@example.com");
    expect(await testDb().user.count()).toBe(1);
  });

  test("a signed-out browser's cross-site POST is checked at once (no detour), and signs in", async () => {
    const jar = new CookieJar();
    const answer = await formPostAnswer(jar, ALICE);
    const res = await crossSitePost(jar, answer);
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(res.headers.getSetCookie().some((c) => SESSION.test(c))).toBe(true);
  });

  test("a cross-site POST that carries the session cookie (a browser that allows it) is checked at once and links", async () => {
    const { user } = await upsertCredentialsUser({ email: "carol@example.com", password: "carol-password-long" });
    const jar = new CookieJar();
    jar.apply(await createSession(authRequest(get("/")), toSessionUser(user)));
    const answer = await formPostAnswer(jar, BOB);
    const url = new URL(answer.action);
    const res = await callRoute(callbackRoute.action, post(url.pathname, answer.fields, { jar, headers: { Origin: idp.issuer, "Sec-Fetch-Site": "cross-site" } }), { provider: "oidc" });
    expect(res).toHaveRedirect(`${ORIGIN}/account`);
    expect(await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } })).toMatchObject({ userId: user.id });
  });

  test("a POST that does not say where it came from (no Sec-Fetch-Site) is checked at once, as before", async () => {
    const { user } = await upsertCredentialsUser({ email: "carol@example.com", password: "carol-password-long" });
    const jar = new CookieJar();
    jar.apply(await createSession(authRequest(get("/")), toSessionUser(user)));
    const answer = await formPostAnswer(jar, BOB);
    const res = await deliver(crossSiteCookies(jar), answer);
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).not.toContain("/auth/callback/");
  });
});
