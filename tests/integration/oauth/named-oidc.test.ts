// Several OpenID providers at once (AUTH_OIDC_<NAME>_*): two real IdPs (oidc-provider over HTTP,
// tests/support/idp.ts), each a provider with id <name>, its label on the sign-in page, its own
// callback URL, and flows that cannot be crossed from one provider to the other.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getConfig, resetConfig } from "../../../app/auth/core/config.server.ts";
import { clearOAuthCaches } from "../../../app/auth/oauth/http.server.ts";
import { providersResponse } from "../../../app/auth/signin/endpoint.server.ts";
import { providerCallbackLines } from "../../../app/dev/provider-callbacks.server.ts";
import * as signinRoute from "../../../app/routes/auth/signin";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, ORIGIN } from "../../support/http.ts";
import { ALICE, BOB, startTestIdp, TEST_CLIENT, visitIdp, type TestIdp } from "../../support/idp.ts";
import { authorizationUrlOf, deliver, sessionOf, signInThroughIdp, startSignIn } from "../../support/oauth-flow.ts";

let acme: TestIdp;
let globex: TestIdp;

const client = (name: string) => ({ ...TEST_CLIENT, redirectUris: [`${ORIGIN}/auth/callback/${name}`] });

beforeAll(async () => {
  [acme, globex] = await Promise.all([startTestIdp({ clients: [client("acme")] }), startTestIdp({ clients: [client("globex_eu")] })]);
  Object.assign(process.env, {
    AUTH_OIDC_ACME_ISSUER: acme.issuer,
    AUTH_OIDC_ACME_ID: TEST_CLIENT.clientId,
    AUTH_OIDC_ACME_SECRET: TEST_CLIENT.clientSecret,
    AUTH_OIDC_ACME_LABEL: "Acme Workforce",
    AUTH_OIDC_GLOBEX_EU_ISSUER: globex.issuer,
    AUTH_OIDC_GLOBEX_EU_ID: TEST_CLIENT.clientId,
    AUTH_OIDC_GLOBEX_EU_SECRET: TEST_CLIENT.clientSecret,
  });
  clearOAuthCaches();
  resetConfig();
});
afterAll(async () => {
  await Promise.all([acme?.stop(), globex?.stop()]);
});
beforeEach(() => resetDatabase());

describe(`Several OpenID providers (${dbLabel})`, () => {
  test("each is listed under its lower-case name with its label and its own callback URL", async () => {
    const body = (await providersResponse(get("/auth/providers")).json()) as Record<string, Record<string, string>>;
    expect(body.acme).toEqual({ id: "acme", name: "Acme Workforce", type: "oidc", signinUrl: `${ORIGIN}/auth/signin/acme`, callbackUrl: `${ORIGIN}/auth/callback/acme` });
    // Without _LABEL the button says the name, word by word.
    expect(body.globex_eu).toMatchObject({ id: "globex_eu", name: "Globex Eu", callbackUrl: `${ORIGIN}/auth/callback/globex_eu` });
    expect(body.oidc).toBeUndefined();
  });

  test("the sign-in page offers both, by label", async () => {
    const page = (await (await callRoute(signinRoute.loader, get("/auth/signin"))).json()) as { providers: { id: string; name: string }[] };
    expect(page.providers.filter((p) => p.id === "acme" || p.id === "globex_eu").map((p) => [p.id, p.name])).toEqual([
      ["acme", "Acme Workforce"],
      ["globex_eu", "Globex Eu"],
    ]);
  });

  test("the dev banner lists each provider's callback URL to register, on AUTH_URL when set", () => {
    expect(providerCallbackLines(getConfig(), "http://localhost:5174")).toEqual([
      "  Acme Workforce (acme) → http://localhost:5174/auth/callback/acme",
      "  Globex Eu (globex_eu) → http://localhost:5174/auth/callback/globex_eu",
    ]);
    process.env.AUTH_URL = "https://app.example.com";
    resetConfig();
    try {
      expect(providerCallbackLines(getConfig(), "http://localhost:5174")[0]).toBe("  Acme Workforce (acme) → https://app.example.com/auth/callback/acme");
    } finally {
      delete process.env.AUTH_URL;
      resetConfig();
    }
  });

  test("a sign-in at each IdP goes to that IdP, comes back to its own callback and links an account of that provider", async () => {
    const alice = new CookieJar();
    const { start, res } = await signInThroughIdp(alice, ALICE, { provider: "acme", callbackUrl: "/account" });
    expect(new URL(start.headers.get("Location")!).origin).toBe(acme.issuer);
    expect(new URL(start.headers.get("Location")!).searchParams.get("redirect_uri")).toBe(`${ORIGIN}/auth/callback/acme`);
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect((await sessionOf(alice))?.user.email).toBe(ALICE.email);

    const bob = new CookieJar();
    const second = await signInThroughIdp(bob, BOB, { provider: "globex_eu" });
    expect(new URL(second.start.headers.get("Location")!).origin).toBe(globex.issuer);
    expect((await sessionOf(bob))?.user.name).toBe(BOB.name);

    const accounts = await testDb().account.findMany({ orderBy: { provider: "asc" } });
    expect(accounts.map((a) => [a.provider, a.providerAccountId])).toEqual([
      ["acme", ALICE.sub],
      ["globex_eu", BOB.sub],
    ]);
  });

  test("an answer from one provider delivered to the other's callback is refused (the flow is bound to its provider)", async () => {
    const jar = new CookieJar();
    const start = await startSignIn(jar, "acme");
    const answer = await visitIdp(await authorizationUrlOf(start), ALICE);
    if (answer.kind !== "redirect") throw new Error("expected a redirect answer");
    const crossed = { kind: "redirect" as const, url: answer.url.replace("/auth/callback/acme", "/auth/callback/globex_eu") };
    const res = await deliver(jar, crossed, "globex_eu");
    expect(res).toHaveErrorRedirect("OAuthCallback");
    expect(await sessionOf(jar)).toBeNull();
    expect(await testDb().account.count()).toBe(0);
  });
});
