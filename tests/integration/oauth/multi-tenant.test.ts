// Microsoft Entra ID's multi-tenant endpoint, against a local server shaped like it (the hostile
// IdP's multi-tenant modes): discovery states the template issuer "<origin>/{tenantid}/v2.0" and
// each ID token names its own tenant, so the issuer an ID token must carry is derived from its
// `tid` (the preset's idTokenIssuer). The real preset is used, pointed at the local authority, and
// driven through the strategy's two legs exactly as the sign-in and callback routes call it.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { AuthError } from "../../../app/auth/core/errors.ts";
import { microsoftEntraIdProvider } from "../../../app/auth/oauth/presets/microsoft-entra-id.server.ts";
import { clearOAuthCaches } from "../../../app/auth/oauth/http.server.ts";
import { OAuthStrategy } from "../../../app/auth/oauth/strategy.server.ts";
import type { OAuthProfile } from "../../../app/auth/oauth/presets/definition.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, get, post } from "../../support/http.ts";
import { HOSTILE_CLIENT, HOSTILE_TENANT, HOSTILE_USER, startHostileIdp, type HostileIdp, type HostileMode } from "../../support/hostile-idp.ts";

let hostile: HostileIdp;

beforeAll(async () => {
  hostile = await startHostileIdp();
});
afterAll(() => hostile?.stop());
beforeEach(async () => {
  clearOAuthCaches();
  await resetDatabase();
});

/** Sign-in leg → the IdP's authorize redirect → callback leg; the profile verify() was given, or the error. */
async function signIn(mode: HostileMode): Promise<{ profile: OAuthProfile } | { error: AuthError }> {
  hostile.reset(mode);
  const definition = microsoftEntraIdProvider(HOSTILE_CLIENT, hostile.issuer);
  const strategy = new OAuthStrategy<OAuthProfile>(definition, getConfig(), async ({ profile }) => profile);
  const jar = new CookieJar();
  const start = await strategy.authenticate(post(`/auth/signin/${definition.id}`, {}, { jar })).then(
    () => {
      throw new Error("the sign-in leg must answer with a redirect");
    },
    (thrown: unknown) => thrown,
  );
  if (!(start instanceof Response)) return { error: start as AuthError };
  jar.apply(start);
  const authorize = new URL(start.headers.get("Location")!);
  expect(authorize.origin + authorize.pathname).toBe(`${hostile.issuer}/authorize`);
  const answer = new URL((await fetch(authorize, { redirect: "manual" })).headers.get("Location")!);
  try {
    return { profile: await strategy.authenticate(get(answer.pathname + answer.search, { jar })) };
  } catch (error) {
    if (error instanceof AuthError) return { error };
    throw error;
  }
}

describe(`Entra ID multi-tenant issuer (${dbLabel})`, () => {
  test("an ID token whose iss is the tenant its tid names is accepted", async () => {
    const result = await signIn("multi-tenant");
    if ("error" in result) throw result.error;
    expect(result.profile).toMatchObject({ id: HOSTILE_USER.sub, email: HOSTILE_USER.email, emailVerified: false });
    expect(hostile.hits["/common/v2.0/.well-known/openid-configuration"]).toBe(1);
    expect(hostile.hits["/jwks"]).toBe(1);
  });

  test(`an ID token for tenant ${HOSTILE_TENANT} whose iss names another tenant → OAuthCallback`, async () => {
    const result = await signIn("multi-tenant-foreign-iss");
    expect("error" in result && result.error.code).toBe("OAuthCallback");
    const event = await testDb().authEvent.findFirstOrThrow({ where: { type: "signin-failed" } });
    expect(JSON.parse(event.detail!).reason).toMatch(/token protocol: unexpected JWT "iss"/);
  });
});
