// Failure cases against a hostile IdP (tests/support/hostile-idp.ts): each wrong answer must end
// in the error codes, with no session, no user and no account row, the check cookies
// cleared, and nothing but the code in the response. Mode "ok" is the control: the same IdP,
// answering correctly, signs in.
import { createServer } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { loadConfig, resetConfig } from "../../../app/auth/core/config.server.ts";
import { clearOAuthCaches } from "../../../app/auth/oauth/http.server.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { HOSTILE_CLIENT, HOSTILE_USER, startHostileIdp, type HostileIdp, type HostileMode } from "../../support/hostile-idp.ts";
import { checkCookieChanges, deliver, sessionOf, startSignIn } from "../../support/oauth-flow.ts";

let hostile: HostileIdp;
/** Slow endpoints answer after 1.5 s; the client gives up after 0.4 s. */
const TIMEOUT_MS = 400;

function configure(issuer: string) {
  process.env.AUTH_OIDC_ISSUER = issuer;
  process.env.AUTH_OIDC_ID = HOSTILE_CLIENT.clientId;
  process.env.AUTH_OIDC_SECRET = HOSTILE_CLIENT.clientSecret;
  process.env.AUTH_OIDC_NAME = "Hostile IdP";
  clearOAuthCaches();
  resetConfig({ ...loadConfig(), oauthTimeoutMs: TIMEOUT_MS });
}

beforeAll(async () => {
  hostile = await startHostileIdp();
});
afterAll(async () => {
  await hostile?.stop();
  resetConfig();
});
beforeEach(async () => {
  configure(hostile.issuer);
  await resetDatabase();
});

/** Why the last sign-in failed, from the audit trail (the response never says). */
async function failureReason(): Promise<string> {
  const event = await testDb().authEvent.findFirstOrThrow({ where: { type: "signin-failed" }, orderBy: { at: "desc" } });
  return String(JSON.parse(event.detail!).reason);
}

/** Sign-in start → the hostile IdP's authorize redirect → the callback, like a browser. */
async function attempt(mode: HostileMode, query = "") {
  hostile.reset(mode);
  const jar = new CookieJar();
  const started = Date.now();
  const start = await startSignIn(jar, "oidc", { query });
  const location = start.headers.get("Location")!;
  if (!location.startsWith(hostile.issuer)) return { jar, start, res: start, ms: Date.now() - started };
  const authz = await fetch(location, { redirect: "manual" });
  const res = await deliver(jar, { kind: "redirect", url: authz.headers.get("Location")! });
  return { jar, start, res, ms: Date.now() - started };
}

async function expectRefused(result: Awaited<ReturnType<typeof attempt>>, code: string) {
  const { res, jar } = result;
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("Location")!);
  // Only the code travels: no message, no cause, no stack.
  expect([...location.searchParams.keys()]).toEqual(["error"]);
  expect(location.searchParams.get("error")).toBe(code);
  expect(await res.text()).toBe("");
  expect(res).not.toHaveSessionCookie();
  expect(await sessionOf(jar)).toBeNull();
  expect(await testDb().user.count()).toBe(0);
  expect(await testDb().account.count()).toBe(0);
}

describe(`hostile IdP (${dbLabel})`, () => {
  test("control: the same IdP answering correctly signs in", async () => {
    const { res, jar } = await attempt("ok");
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2F`);
    expect((await sessionOf(jar))?.user.email).toBe(HOSTILE_USER.email);
    expect(await testDb().account.count()).toBe(1);
    expect(hostile.hits["/jwks"]).toBe(1);
    expect(hostile.hits["/userinfo"]).toBe(1);
  });

  // Each case also names the check that caught it (from the audit trail's reason), so a case
  // cannot pass because something else went wrong first.
  const refusedAtCallback: [HostileMode, string, RegExp][] = [
    ["bad-signature", "ID token signed by a key other than the one its kid names", /id_token rejected: signature verification failed/],
    ["alg-none", "unsigned ID token (alg: none), even though the metadata lists none", /id_token rejected: .*(alg|Unsecured|JWS)/i],
    ["unknown-kid", "ID token signed with a key the JWKS never has", /id_token rejected: no applicable key/],
    ["wrong-aud", "ID token for another client (aud)", /token protocol: unexpected JWT "aud"/],
    ["wrong-azp", "ID token with a foreign authorized party (azp)", /token protocol: .*azp/],
    // OIDC Core §3.1.3.7: an azp must be our client id even when aud is ours alone.
    ["foreign-azp-single-aud", "ID token for us alone (aud) naming another authorized party (azp)", /token protocol: .*"azp"/],
    ["wrong-iss", "ID token from another issuer (iss claim)", /token protocol: unexpected JWT "iss"/],
    ["wrong-iss-param", "authorization response naming another issuer (RFC 9207 iss)", /authorization response rejected: unexpected "iss"/],
    ["expired", "expired ID token", /token protocol: .*"exp"/],
    // The IdP dates it 300 s ahead of its own clock; the check reads the clock a moment later, a second boundary may fall between.
    ["future-iat", "ID token issued in the future (beyond the 10 s tolerance)", /id_token iat is (?:29\d|300) s in the future/],
    ["missing-nonce", "ID token without the nonce", /token protocol: JWT "nonce" \(nonce\) claim missing/],
    ["wrong-nonce", "ID token with another nonce", /token protocol: unexpected ID Token "nonce"/],
    ["userinfo-sub-mismatch", "userinfo about another subject", /userinfo protocol: unexpected "response" body "sub" property value/],
    ["provider-error", "provider error other than access_denied", /provider answered error=server_error/],
    ["token-error", "token endpoint refusing the code", /token http: 400 invalid_grant/],
  ];
  for (const [mode, what, reason] of refusedAtCallback) {
    test(`${mode}: ${what} → OAuthCallback`, async () => {
      const result = await attempt(mode);
      await expectRefused(result, "OAuthCallback");
      expect(checkCookieChanges(result.res).expired).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);
      expect(await failureReason()).toMatch(reason);
    });
  }

  test("max_age from the client: an ID token whose auth_time is older → OAuthCallback", async () => {
    await expectRefused(await attempt("stale-auth-time", "?max_age=600"), "OAuthCallback");
    expect(await failureReason()).toMatch(/token protocol: too much time has elapsed since the last End-User authentication/);
  });

  test("max_age from the client: an ID token without auth_time → OAuthCallback", async () => {
    await expectRefused(await attempt("missing-auth-time", "?max_age=600"), "OAuthCallback");
    expect(await failureReason()).toMatch(/token protocol: JWT "auth_time" .* claim missing/);
  });

  test("control: without max_age the same stale auth_time signs in; with a max_age it satisfies, too", async () => {
    expect((await attempt("stale-auth-time")).res).toHaveSessionCookie();
    await resetDatabase();
    expect((await attempt("stale-auth-time", "?max_age=7200")).res).toHaveSessionCookie();
  });

  test("unknown-kid refetches the JWKS once before giving up", async () => {
    await attempt("unknown-kid");
    expect(hostile.hits["/jwks"]).toBe(2);
  });

  test("key rotation: a kid missing from the cached JWKS is found after one refetch, and the sign-in succeeds", async () => {
    const { res } = await attempt("rotated-kid");
    expect(res).toHaveSessionCookie();
    expect(hostile.hits["/jwks"]).toBe(2);
  });

  for (const [mode, step] of [
    ["slow-token", "/token"],
    ["slow-userinfo", "/userinfo"],
    ["slow-jwks", "/jwks"],
  ] as const) {
    test(`${mode}: a ${step} slower than the time budget → OAuthCallback, without waiting for it`, async () => {
      const result = await attempt(mode);
      await expectRefused(result, "OAuthCallback");
      expect(hostile.hits[step]).toBe(1);
      expect(result.ms).toBeLessThan(hostile.slowMs);
      expect(await failureReason()).toMatch(new RegExp(`^${step.slice(1)} timeout`));
    });
  }

  for (const mode of ["unreachable-token", "unreachable-userinfo", "unreachable-jwks"] as const) {
    test(`${mode}: a refused connection → OAuthCallback`, async () => {
      await expectRefused(await attempt(mode), "OAuthCallback");
      expect(await failureReason()).toMatch(new RegExp(`^${mode.replace("unreachable-", "")} network`));
    });
  }

  test("slow discovery at sign-in → OAuthSignin on the sign-in page, no check cookies set", async () => {
    const result = await attempt("slow-discovery");
    expect(result.res).toHaveRedirect(`${ORIGIN}/auth/signin?error=OAuthSignin`);
    await expectRefused(result, "OAuthSignin");
    expect(checkCookieChanges(result.res).set).toEqual([]);
    expect(result.ms).toBeLessThan(hostile.slowMs);
    expect(await failureReason()).toMatch(/^discovery timeout/);
  });

  test("unreachable discovery (nothing listening) → OAuthSignin", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    configure(`http://127.0.0.1:${port}`);
    const jar = new CookieJar();
    const res = await startSignIn(jar);
    await expectRefused({ jar, start: res, res, ms: 0 }, "OAuthSignin");
    expect(await failureReason()).toMatch(/^discovery network/);
  });

  test("a failed discovery is not cached: the next sign-in tries again and succeeds", async () => {
    await attempt("slow-discovery");
    const { res } = await attempt("ok");
    expect(res).toHaveSessionCookie();
  });

  test("failures are in the audit trail with their reason, never in the response", async () => {
    await attempt("wrong-aud");
    const events = await testDb().authEvent.findMany({ where: { type: "signin-failed" } });
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.detail!)).toMatchObject({ provider: "oidc", code: "OAuthCallback" });
    expect(JSON.parse(events[0]!.detail!).reason).toMatch(/"aud"/);
  });
});
