// The check cookies (state, PKCE verifier, nonce): several tabs at once, and every way a callback
// can fail to match its flow. Each failure ends in OAuthCallback with no session and no rows, and
// the flow's cookies are cleared.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { MAX_COOKIE_SIZE } from "../../../app/auth/core/cookies.server.ts";
import { decodeJwt, encodeJwt } from "../../../app/auth/core/jwt.server.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { ALICE, startTestIdp, visitIdp, type TestIdp } from "../../support/idp.ts";
import { checkCookieChanges, deliver, sessionOf, signInThroughIdp, startSignIn } from "../../support/oauth-flow.ts";

let idp: TestIdp;

beforeAll(async () => {
  idp = await startTestIdp();
  // A second provider, so a state set by one can be presented to the other. GitHub's endpoints
  // are explicit: starting its flow makes no network call.
  idp.configure({ AUTH_GITHUB_ID: "gh-client", AUTH_GITHUB_SECRET: "gh-secret" });
});
afterAll(() => idp?.stop());
beforeEach(() => resetDatabase());

async function sealedPayload(jar: CookieJar, name: string) {
  return decodeJwt({ token: decodeURIComponent(jar.get(name)!), secrets: getConfig().secrets, salt: name });
}

const CHECK_NAMES = ["authjs.state", "authjs.pkce.code_verifier", "authjs.nonce"];
/**
 * What the three check cookies may add to a request's Cookie header: the state cookie at most one
 * browser cookie, the other two five fixed-size entries each (measured: 4.4 KiB with 2,048-character
 * callback URLs, 6.1 KiB at worst with five 500-character ones).
 */
const CHECK_COOKIES_MAX_BYTES = 7 * 1024;

/** An absolute callback URL of exactly 2,048 characters (the longest accepted). */
function longCallbackUrl(i: number) {
  const head = `${ORIGIN}/account?tab=${i}&pad=`;
  return head + "x".repeat(2048 - head.length);
}

function stateOf(start: Response) {
  return new URL(start.headers.get("Location")!).searchParams.get("state")!;
}

async function liveStates(jar: CookieJar): Promise<string[]> {
  const p = await sealedPayload(jar, "authjs.state");
  return [p.value as string, ...((p.earlier as { value: string }[] | undefined) ?? []).map((e) => e.value)];
}

async function liveFlows(jar: CookieJar): Promise<string[]> {
  const p = await sealedPayload(jar, "authjs.state");
  return [p.flow as string, ...((p.earlier as { flow: string }[] | undefined) ?? []).map((e) => e.flow)];
}

async function expectNothingCreated(jar: CookieJar) {
  expect(await sessionOf(jar)).toBeNull();
  expect(await testDb().user.count()).toBe(0);
  expect(await testDb().account.count()).toBe(0);
}

function withParam(url: string, name: string, value: string | null) {
  const u = new URL(url);
  if (value === null) u.searchParams.delete(name);
  else u.searchParams.set(name, value);
  return u.href;
}

describe(`check cookies (${dbLabel})`, () => {
  test("two tabs signing in at once: both callbacks succeed, each uses up only its own flow", async () => {
    const jar = new CookieJar();
    const tabA = await startSignIn(jar, "oidc", { callbackUrl: "/a" });
    const tabB = await startSignIn(jar, "oidc", { callbackUrl: "/b" });
    const state = await sealedPayload(jar, "authjs.state");
    expect(state.value).toBe(new URL(tabB.headers.get("Location")!).searchParams.get("state"));
    expect(state.earlier).toHaveLength(1);

    const idpJar = new CookieJar();
    const resA = await deliver(jar, await visitIdp(tabA.headers.get("Location")!, ALICE, idpJar));
    expect(resA).toHaveSessionCookie();
    // Each tab keeps its own callback URL, although tab B's start replaced the shared cookie.
    expect(resA).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Fa`);
    // Tab A's flow is gone, tab B's is still there: the cookies are rewritten, not expired.
    expect(checkCookieChanges(resA)).toEqual({ set: ["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"], expired: [] });
    const left = await sealedPayload(jar, "authjs.state");
    expect(left.value).toBe(new URL(tabB.headers.get("Location")!).searchParams.get("state"));
    expect(left.earlier).toBeUndefined();

    const resB = await deliver(jar, await visitIdp(tabB.headers.get("Location")!, ALICE, idpJar));
    expect(resB).toHaveSessionCookie();
    expect(resB).toHaveRedirect(`${ORIGIN}/b`);
    expect(checkCookieChanges(resB).expired).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);
    expect(await testDb().account.count()).toBe(1);
  });

  test("at most five sign-ins wait at once; a sixth drops the oldest", async () => {
    const jar = new CookieJar();
    const starts = [];
    for (let i = 0; i < 6; i++) starts.push(await startSignIn(jar));
    const state = await sealedPayload(jar, "authjs.state");
    expect((state.earlier as unknown[]).length).toBe(4);
    const newest = await deliver(jar, await visitIdp(starts[5]!.headers.get("Location")!, ALICE));
    expect(newest).toHaveSessionCookie();
    const left = await sealedPayload(jar, "authjs.state");
    expect((left.earlier as unknown[]).length).toBe(3);
    const oldest = await deliver(jar, await visitIdp(starts[0]!.headers.get("Location")!, ALICE));
    expect(oldest).toHaveErrorRedirect("OAuthCallback");
  });

  test("five sign-ins with 2,048-character callback URLs: every check cookie stays one cookie a browser keeps, the oldest flows give way, the newest completes", async () => {
    const jar = new CookieJar();
    const starts: Response[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await startSignIn(jar, "oidc", { callbackUrl: longCallbackUrl(i) });
      // No chunks, and no Set-Cookie a browser would drop (it keeps at most 4096 bytes per cookie).
      for (const c of res.headers.getSetCookie().filter((c) => /^authjs\.(state|pkce|nonce)/.test(c))) {
        expect(c).toMatch(/^authjs\.(state|pkce\.code_verifier|nonce)=/);
        expect(Buffer.byteLength(c), c.slice(0, 30)).toBeLessThanOrEqual(MAX_COOKIE_SIZE);
      }
      starts.push(res);
    }
    // What the check cookies add to every request header, far from the 16 KiB limit.
    const checkBytes = CHECK_NAMES.reduce((n, name) => n + Buffer.byteLength(`${name}=${jar.get(name) ?? ""}; `), 0);
    expect(checkBytes).toBeLessThanOrEqual(CHECK_COOKIES_MAX_BYTES);
    // Every flow still in the cookies is whole (state, verifier and nonce), newest first.
    const states = await liveStates(jar);
    expect(states[0]).toBe(stateOf(starts[4]!));
    for (const name of ["authjs.pkce.code_verifier", "authjs.nonce"]) {
      const p = await sealedPayload(jar, name);
      expect([p.flow, ...((p.earlier as { flow: string }[] | undefined) ?? []).map((e) => e.flow)]).toEqual(await liveFlows(jar));
    }

    const idpJar = new CookieJar();
    const newest = await deliver(jar, await visitIdp(starts[4]!.headers.get("Location")!, ALICE, idpJar));
    expect(newest).toHaveSessionCookie();
    expect(`${ORIGIN}${new URL(newest.headers.get("Location")!).searchParams.get("callbackUrl")}`).toBe(longCallbackUrl(4));
    // The oldest flow gave way to the newer ones: its callback fails cleanly.
    expect(states).not.toContain(stateOf(starts[0]!));
    expect(await deliver(jar, await visitIdp(starts[0]!.headers.get("Location")!, ALICE, idpJar))).toHaveErrorRedirect("OAuthCallback");
  });

  test("a callback URL that percent-encoding makes too long to seal: the flow is kept without it, and completes", async () => {
    const jar = new CookieJar();
    // 1,001 characters as sent, 6,000 once each "é" is percent-encoded into the validated URL.
    const start = await startSignIn(jar, "oidc", { callbackUrl: `/${"é".repeat(1000)}` });
    expect(start.status).toBe(302);
    const checks = start.headers.getSetCookie().filter((c) => /^authjs\.(state|pkce|nonce)/.test(c));
    expect(checks).toHaveLength(3);
    for (const c of checks) expect(Buffer.byteLength(c)).toBeLessThanOrEqual(MAX_COOKIE_SIZE);
    expect((await sealedPayload(jar, "authjs.state")).callbackUrl).toBeUndefined();
    const res = await deliver(jar, await visitIdp(start.headers.get("Location")!, ALICE));
    expect(res).toHaveSessionCookie();
  });

  test("short callback URLs: five flows fit, as before", async () => {
    const jar = new CookieJar();
    for (let i = 0; i < 5; i++) await startSignIn(jar, "oidc", { callbackUrl: `/tab-${i}` });
    expect(await liveFlows(jar)).toHaveLength(5);
  });

  test("a state that matches no flow (tampered) → OAuthCallback; the provider's flows are cleared", async () => {
    const jar = new CookieJar();
    const start = await startSignIn(jar);
    const answer = await visitIdp(start.headers.get("Location")!, ALICE);
    if (answer.kind !== "redirect") throw new Error("expected a redirect");
    const res = await deliver(jar, { kind: "redirect", url: withParam(answer.url, "state", "forged-state-value") });
    expect(res).toHaveRedirect(`${ORIGIN}/auth/signin?error=OAuthCallback`);
    expect(res).not.toHaveSessionCookie();
    expect(checkCookieChanges(res).expired).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);
    await expectNothingCreated(jar);
  });

  test("no state parameter at all → OAuthCallback", async () => {
    const jar = new CookieJar();
    const start = await startSignIn(jar);
    const answer = await visitIdp(start.headers.get("Location")!, ALICE);
    if (answer.kind !== "redirect") throw new Error("expected a redirect");
    expect(await deliver(jar, { kind: "redirect", url: withParam(answer.url, "state", null) })).toHaveErrorRedirect("OAuthCallback");
    await expectNothingCreated(jar);
  });

  test("a callback in a browser that never started the flow (no check cookies) → OAuthCallback", async () => {
    const start = await startSignIn(new CookieJar());
    const answer = await visitIdp(start.headers.get("Location")!, ALICE);
    const stranger = new CookieJar();
    expect(await deliver(stranger, answer)).toHaveErrorRedirect("OAuthCallback");
    await expectNothingCreated(stranger);
  });

  for (const [cookie, label] of [
    ["authjs.pkce.code_verifier", "PKCE verifier"],
    ["authjs.nonce", "nonce"],
  ] as const) {
    test(`a missing ${label} cookie → OAuthCallback, and the code is never exchanged`, async () => {
      const jar = new CookieJar();
      const start = await startSignIn(jar);
      const answer = await visitIdp(start.headers.get("Location")!, ALICE);
      jar.delete(cookie);
      const res = await deliver(jar, answer);
      expect(res).toHaveErrorRedirect("OAuthCallback");
      expect(res).not.toHaveSessionCookie();
      // The flow is used up: its other cookies are cleared too.
      const expired = checkCookieChanges(res).expired;
      expect(expired).toContain("authjs.state");
      await expectNothingCreated(jar);
    });
  }

  test("a state cookie set by another provider (mix-up) → OAuthCallback, and that flow is burnt", async () => {
    const jar = new CookieJar();
    const gh = await startSignIn(jar, "github");
    const ghState = new URL(gh.headers.get("Location")!).searchParams.get("state")!;
    expect((await sealedPayload(jar, "authjs.state")).provider).toBe("github");
    // The GitHub flow's state presented at the OIDC callback.
    const res = await deliver(jar, { kind: "redirect", url: `${ORIGIN}/auth/callback/oidc?code=abc&state=${ghState}&iss=${encodeURIComponent(idp.issuer)}` }, "oidc");
    expect(res).toHaveErrorRedirect("OAuthCallback");
    expect(checkCookieChanges(res).expired).toEqual(["authjs.pkce.code_verifier", "authjs.state"]);
    await expectNothingCreated(jar);
  });

  test("check cookies older than 900 s no longer count", async () => {
    const jar = new CookieJar();
    const start = await startSignIn(jar);
    const answer = await visitIdp(start.headers.get("Location")!, ALICE);
    // The same values, sealed 901 s ago.
    const past = new Date(Date.now() - 901_000);
    for (const name of ["authjs.state", "authjs.pkce.code_verifier", "authjs.nonce"]) {
      const { iat: _i, exp: _e, jti: _j, ...payload } = await sealedPayload(jar, name);
      const token = await encodeJwt({ payload: { ...payload, expiresAt: Math.floor(past.getTime() / 1000) + 900 }, secrets: getConfig().secrets, salt: name, maxAge: 900, now: past });
      jar.set(name, encodeURIComponent(token));
    }
    expect(await deliver(jar, answer)).toHaveErrorRedirect("OAuthCallback");
    await expectNothingCreated(jar);
  });

  test("a check cookie sealed with another secret reads as missing", async () => {
    const jar = new CookieJar();
    const start = await startSignIn(jar);
    const answer = await visitIdp(start.headers.get("Location")!, ALICE);
    const { iat: _i, exp: _e, jti: _j, ...payload } = await sealedPayload(jar, "authjs.state");
    jar.set("authjs.state", encodeURIComponent(await encodeJwt({ payload, secrets: ["another-secret-of-at-least-32-characters!!"], salt: "authjs.state", maxAge: 900 })));
    expect(await deliver(jar, answer)).toHaveErrorRedirect("OAuthCallback");
    await expectNothingCreated(jar);
  });

  test("response_mode=form_post: cross-site-capable cookies (SameSite=None; Secure), and the POSTed answer signs in", async () => {
    const jar = new CookieJar();
    const { start, answer, res } = await signInThroughIdp(jar, ALICE, { query: "?response_mode=form_post", callbackUrl: "/fp" });
    // A cross-site POST does not carry the SameSite=Lax callback-url cookie: the flow's own copy is used.
    expect(new URL(start.headers.get("Location")!).searchParams.get("response_mode")).toBe("form_post");
    const checkCookies = start.headers.getSetCookie().filter((c) => /^authjs\.(state|nonce|pkce)/.test(c));
    expect(checkCookies.map((c) => c.slice(0, c.indexOf("=")))).toEqual(["authjs.state", "authjs.pkce.code_verifier", "authjs.nonce"]);
    for (const c of checkCookies) expect(c).toMatch(/; Secure; SameSite=None$/);
    expect(answer.kind).toBe("form_post");
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Ffp`);
    expect(res).toHaveSessionCookie();
    expect(checkCookieChanges(res).expired).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);
  });

});
