// Logout with Vestibule's provider, on both databases, driven by a real client (oauth4webapi):
// back-channel logout tokens from the durable queue (a local receiver checks each token with the
// provider's JWKS), for every way a session ends; two senders never deliver one row twice; a
// failed delivery is retried with backoff and given up after a bound; cleanup sweeps the queue.
// And RP-initiated logout: a valid id_token_hint naming the current session signs out at once,
// anything else asks.
import { createServer, type Server } from "node:http";
import * as oauth from "oauth4webapi";
import type { AddressInfo } from "node:net";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { deleteAccount } from "../../../app/auth/accounts/deletion.server";
import { disableUser, endAllSessions, endUserSessions } from "../../../app/auth/accounts/admin.server";
import { applyPasswordReset } from "../../../app/auth/accounts/passwords.server";
import { runCleanup } from "../../../app/auth/core/cleanup.server";
import { metricsResponse } from "../../../app/auth/core/metrics.server";
import { closeOutboundProxies } from "../../../app/auth/core/outbound-fetch.server";
import { authRequest } from "../../../app/auth/core/request.server";
import { getSession, renewAuthentication, revokeSession, revokeUserSessions } from "../../../app/auth/core/session.server";
import {
  BACKCHANNEL_LOGOUT_EVENT,
  BACKCHANNEL_MAX_ATTEMPTS,
  backchannelRetryDelayMs,
  claimDueLogouts,
  sendDueLogouts,
} from "../../../app/auth/provider/backchannel.server";
import { signingKey } from "../../support/access-token";
import { call } from "../../support/app-client";
import { createUser, PASSWORD, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { startRecordingProxy } from "../../support/connect-proxy";
import { CookieJar } from "../../support/http";
import { otherInstance } from "../../support/other-instance";
import { postgresUnreachable } from "../../support/postgres-required";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { authorizationUrl, authorize, codeFlow, confirmDeviceCode, discover, follow, insecure, signedInBrowser, testClient, type TestClient } from "../../support/provider-flow";

/** An app's back-channel logout endpoint: records each POST, answers `status` (a queue of answers, then 200). */
type Receiver = { url: string; received: string[]; answers: number[]; stop: () => Promise<void> };

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: "", received: [], answers: [], stop: async () => {} };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const token = new URLSearchParams(body).get("logout_token");
      if (req.method === "POST" && req.headers["content-type"] === "application/x-www-form-urlencoded" && token) receiver.received.push(token);
      res.writeHead(receiver.answers.shift() ?? 200, { "Cache-Control": "no-store" });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel-logout`;
  receiver.stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

let server: ProviderServer;
let receiver: Receiver;
let userId: string;
beforeAll(async () => {
  server = await startProviderServer();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.stop();
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  userId = (await createUser("ada@example.com", "Ada")).id;
  receiver.received.length = 0;
  receiver.answers.length = 0;
});

const APP = "https://app.example.com/cb";
const LOGGED_OUT = "https://app.example.com/logged-out";
const backchannelClient = () =>
  testClient({ redirectUris: [APP], redirectUri: APP, backchannelLogoutUri: receiver.url, postLogoutRedirectUris: [LOGGED_OUT] });

/** Signed in to Vestibule and, through it, to the app: the browser and the app's ID token. */
async function signedInToApp(tc: TestClient) {
  const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
  const { tokens } = await codeFlow(server, await discover(server), tc, jar, { scope: "openid email" });
  return { jar, idToken: tokens.id_token!, claims: decodeJwt(tokens.id_token!) };
}

async function signOut(jar: CookieJar) {
  const csrf = ((await (await call(server.url, jar, "/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
  await (await call(server.url, jar, "/auth/signout", { body: { csrfToken: csrf } })).body?.cancel();
}

/** The logout token checked as an app checks it (Back-Channel Logout 1.0, section 2.6), with the provider's JWKS. */
async function verifiedLogoutToken(token: string, clientId: string) {
  const jwks = createLocalJWKSet(await (await fetch(`${server.url}/oauth/jwks`)).json());
  const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: server.url, audience: clientId, typ: "logout+jwt" });
  return { payload, protectedHeader };
}

/** What /metrics says now. */
async function metricsText(): Promise<string> {
  const token = "m".repeat(40);
  const undo = withEnv({ METRICS_TOKEN: token });
  try {
    return await (await metricsResponse(new Request(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } })))!.text();
  } finally {
    undo();
  }
}

const queued = () => testDb().backchannelLogout.findMany({ orderBy: { createdAt: "asc" } });

describe(`back-channel logout on ${dbLabel}`, () => {
  it("a sign-out sends the app that got an ID token a signed logout token, checked with the JWKS", async () => {
    const tc = await backchannelClient();
    const { jar, claims } = await signedInToApp(tc);
    expect(claims.sid).toEqual(expect.any(String));
    expect(await queued()).toEqual([]);
    expect(await testDb().oAuthPayload.count({ where: { kind: "Session" } })).toBe(1);
    await signOut(jar);
    // The engine's session of that browser ended with it: a new sign-in there gets new sids.
    expect(await testDb().oAuthPayload.count({ where: { kind: "Session" } })).toBe(0);
    expect(await sendDueLogouts()).toEqual({ sent: 1, failed: 0 });
    expect(receiver.received).toHaveLength(1);
    const { payload, protectedHeader } = await verifiedLogoutToken(receiver.received[0]!, tc.client.client_id);
    expect(protectedHeader).toMatchObject({ alg: "RS256", typ: "logout+jwt", kid: expect.any(String) });
    expect(payload).toEqual({
      iss: server.url,
      aud: tc.client.client_id,
      iat: expect.any(Number),
      exp: expect.any(Number),
      jti: expect.any(String),
      sub: userId,
      sid: claims.sid,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(120);
    expect(payload).not.toHaveProperty("nonce");
    // Sent once: the row is marked, a second round sends nothing.
    expect(await sendDueLogouts()).toEqual({ sent: 0, failed: 0 });
    expect(receiver.received).toHaveLength(1);
    expect((await queued())[0]).toMatchObject({ sentAt: expect.any(Date), attempts: 1 });
    expect(await metricsText()).toMatch(/vestibule_oauth_backchannel_logouts_total\{outcome="sent"\} [1-9]/);
  });

  it("every way a session ends tells the app: sign-out, sign-out everywhere, one device, an operator's end, disable, delete, a password reset, everyone's end", async () => {
    const ar = () => authRequest(new Request(`${server.url}/`));
    const ways: [string, (jar: CookieJar) => Promise<unknown>][] = [
      ["sign-out", signOut],
      ["sign out everywhere (and this wasn't me, a password change)", () => revokeUserSessions(userId)],
      ["one device ended from /account", async () => revokeSession(userId, (await testDb().session.findFirstOrThrow({ where: { userId } })).id)],
      ["an admin's end-sessions and npm run user:sessions:end", () => endUserSessions("ada@example.com", { source: "cli" })],
      ["disable", () => disableUser("ada@example.com", { source: "cli" })],
      ["delete", () => deleteAccount(userId, { source: "cli" }, { hooks: [], ar: ar() })],
      ["password reset", () => applyPasswordReset(ar(), userId, "not-a-real-hash", null)],
      ["npm run sessions:end-all", () => endAllSessions({ source: "cli" })],
    ];
    for (const strategy of ["jwt", "database"]) {
      const undo = withEnv({ AUTH_SESSION_STRATEGY: strategy });
      try {
        for (const [way, end] of ways) {
          await resetDatabase();
          userId = (await createUser("ada@example.com", "Ada")).id;
          const tc = await backchannelClient();
          const { jar, claims } = await signedInToApp(tc);
          expect((await testDb().session.findFirstOrThrow({ where: { userId } })).kind).toBe(strategy);
          await end(jar);
          const rows = await queued();
          const what = `${way} (${strategy})`;
          expect(rows.map((r) => ({ clientId: r.clientId, sub: r.sub, sid: r.sid })), what).toEqual([{ clientId: tc.client.client_id, sub: userId, sid: claims.sid }]);
          // The record of the app in that session went with it: nothing is queued twice.
          expect(await testDb().oAuthSessionApp.count(), what).toBe(0);
        }
      } finally {
        undo();
      }
    }
  });

  it("a device that got an ID token through /device is told when the session that allowed it ends", async () => {
    const as = await discover(server);
    const tc = await testClient({ redirectUris: [], grants: ["device_code"], public: true, backchannelLogoutUri: receiver.url });
    const started = await oauth.processDeviceAuthorizationResponse(as, tc.client, await oauth.deviceAuthorizationRequest(as, tc.client, tc.auth, { scope: "openid" }, insecure));
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    expect((await confirmDeviceCode(server, jar, started.user_code)).html).toContain("Device connected");
    const tokens = await oauth.processDeviceCodeResponse(as, tc.client, await oauth.deviceCodeGrantRequest(as, tc.client, tc.auth, started.device_code, insecure));
    const sid = decodeJwt(tokens.id_token!).sid;
    expect(sid).toEqual(expect.any(String));
    await signOut(jar);
    expect(await sendDueLogouts()).toEqual({ sent: 1, failed: 0 });
    expect((await verifiedLogoutToken(receiver.received[0]!, tc.client.client_id)).payload).toMatchObject({ sub: userId, sid });
  });

  it("an app with no back-channel URI, or one that got no ID token, is not told; another session's end does not tell this one's apps", async () => {
    const silent = await testClient({ redirectUris: [APP], redirectUri: APP });
    const tc = await backchannelClient();
    const { jar } = await signedInToApp(silent);
    // A code issued but never redeemed: no ID token, nothing to tell.
    const other = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const as = await discover(server);
    await authorize(server, other, await authorizationUrl(as, tc, { scope: "openid email" }));
    expect(await testDb().oAuthSessionApp.findMany()).toEqual([expect.objectContaining({ clientId: tc.client.client_id, idTokenAt: null })]);
    await signOut(jar);
    expect(await queued()).toEqual([]);
    // The app signed in through the second browser: ending the first browser's session tells it nothing.
    await codeFlow(server, as, tc, other, { scope: "openid email" });
    expect(await queued()).toEqual([]);
    await signOut(other);
    expect(await queued()).toHaveLength(1);
  });

  it.each(["jwt", "database"])("a re-authentication renews the session under a new id (%s): the apps stay signed in, and are told when that session ends", async (strategy) => {
    const undo = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    onTestFinished(undo);
    const tc = await backchannelClient();
    const { jar, claims } = await signedInToApp(tc);
    const ar = () => authRequest(new Request(`${server.url}/account`, { headers: { cookie: jar.header() } }));
    const { session } = await getSession(ar(), { roll: false });
    const before = session!.sessionId;
    const cookies = await renewAuthentication(ar(), session!, { factors: ["pwd"] });
    expect(cookies).not.toBeNull();
    jar.apply(cookies!);
    const after = (await getSession(ar(), { roll: false })).session!.sessionId;
    expect(after).not.toBe(before);
    expect(await queued()).toEqual([]);
    expect(await testDb().oAuthSessionApp.findMany()).toEqual([expect.objectContaining({ sessionId: after, sid: claims.sid })]);
    await signOut(jar);
    expect((await queued()).map((r) => r.sid)).toEqual([claims.sid]);
  });

  it("two senders at once deliver each logout once (a claim is one conditional UPDATE)", async () => {
    const tc = await backchannelClient();
    await testDb().backchannelLogout.createMany({
      data: Array.from({ length: 6 }, (_, i) => ({ clientId: tc.client.client_id, userId, sub: userId, sid: `sid-${i}` })),
    });
    const [a, b] = await Promise.all([claimDueLogouts(), claimDueLogouts()]);
    expect(a.length + b.length).toBe(6);
    expect(new Set([...a, ...b].map((r) => r.id)).size).toBe(6);
    await testDb().backchannelLogout.updateMany({ data: { claimedUntil: null } });
    const results = await Promise.all([sendDueLogouts(), sendDueLogouts()]);
    expect(results.reduce((n, r) => n + r.sent, 0)).toBe(6);
    expect(receiver.received).toHaveLength(6);
    const sids = await Promise.all(receiver.received.map(async (t) => (await verifiedLogoutToken(t, tc.client.client_id)).payload.sid));
    expect(new Set(sids).size).toBe(6);
  });

  it.skipIf(dbLabel !== "postgres")("two instances (two processes on one PostgreSQL database) sending at once deliver each logout once", async () => {
    if (await postgresUnreachable("two provider instances")) return;
    const tc = await backchannelClient();
    await testDb().backchannelLogout.createMany({
      data: Array.from({ length: 12 }, (_, i) => ({ clientId: tc.client.client_id, userId, sub: userId, sid: `sid-${i}` })),
    });
    const other = await otherInstance<{ sent: number; failed: number }>({ SEND_LOGOUTS: "1" });
    const [there, here] = await Promise.all([other.go(), sendDueLogouts()]);
    expect(there.sent + here.sent).toBe(12);
    expect(there.failed + here.failed).toBe(0);
    expect(receiver.received).toHaveLength(12);
    expect(await testDb().backchannelLogout.count({ where: { sentAt: null } })).toBe(0);
  }, 60_000);

  it("a 500 is retried after the backoff; after the last try the row is given up, logged and counted; cleanup sweeps the queue", async () => {
    const tc = await backchannelClient();
    const { jar } = await signedInToApp(tc);
    await signOut(jar);
    receiver.answers.push(500);
    const start = new Date();
    expect(await sendDueLogouts(start)).toEqual({ sent: 0, failed: 1 });
    const [row] = await queued();
    expect(row).toMatchObject({ attempts: 1, sentAt: null, givenUpAt: null, lastError: expect.stringContaining("500") });
    expect(row!.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(start.getTime() + backchannelRetryDelayMs(1) - 1_000);
    // Not due yet.
    expect(await sendDueLogouts(new Date())).toEqual({ sent: 0, failed: 0 });
    expect(await sendDueLogouts(new Date(row!.nextAttemptAt.getTime() + 1))).toEqual({ sent: 1, failed: 0 });
    expect(receiver.received).toHaveLength(2);
    expect(backchannelRetryDelayMs(2)).toBeGreaterThan(backchannelRetryDelayMs(1));

    // The last try fails: given up, never tried again.
    await testDb().backchannelLogout.create({ data: { clientId: tc.client.client_id, userId, sub: userId, sid: "s", attempts: BACKCHANNEL_MAX_ATTEMPTS - 1 } });
    receiver.answers.push(503);
    expect(await sendDueLogouts()).toEqual({ sent: 0, failed: 1 });
    const givenUp = (await queued()).find((r) => r.sid === "s")!;
    expect(givenUp).toMatchObject({ attempts: BACKCHANNEL_MAX_ATTEMPTS, sentAt: null, givenUpAt: expect.any(Date) });
    expect(await sendDueLogouts(new Date(Date.now() + 365 * 24 * 3_600_000))).toEqual({ sent: 0, failed: 0 });
    expect(await metricsText()).toMatch(/vestibule_oauth_backchannel_logouts_total\{outcome="given_up"\} [1-9]/);

    // A week on, both are swept.
    const result = await runCleanup(new Date(Date.now() + 8 * 24 * 3_600_000));
    expect(result.ran && result.counts.backchannelLogouts).toBe(2);
    expect(await queued()).toEqual([]);
  });

  it("the POST goes through the outbound proxy (HTTP_PROXY)", async () => {
    const proxy = await startRecordingProxy();
    const undo = withEnv({ HTTP_PROXY: proxy.url, http_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined });
    try {
      const tc = await backchannelClient();
      await testDb().backchannelLogout.create({ data: { clientId: tc.client.client_id, userId, sub: userId, sid: "via-proxy" } });
      expect(await sendDueLogouts()).toEqual({ sent: 1, failed: 0 });
      expect(proxy.tunnels).toEqual([new URL(receiver.url).host]);
      expect(proxy.requests).toEqual(["POST /backchannel-logout"]);
    } finally {
      undo();
      await closeOutboundProxies();
      await proxy.stop();
    }
  });

  it("a receiver that does not answer within 5 s is a failure, retried later", async () => {
    const hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    try {
      const tc = await testClient({ redirectUris: [APP], redirectUri: APP, backchannelLogoutUri: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/bc` });
      await testDb().backchannelLogout.create({ data: { clientId: tc.client.client_id, userId, sub: userId, sid: "slow" } });
      const started = Date.now();
      expect(await sendDueLogouts()).toEqual({ sent: 0, failed: 1 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
      expect((await queued())[0]).toMatchObject({ attempts: 1, sentAt: null });
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  }, 15_000);
});

describe(`RP-initiated logout on ${dbLabel}`, () => {
  const endSessionUrl = (params: Record<string, string>) => `/oauth/end_session?${new URLSearchParams(params)}`;
  const sessionOf = async (jar: CookieJar) => (await call(server.url, jar, "/auth/session")).json();

  it("a valid id_token_hint naming the current session signs out at once and goes to the registered post_logout_redirect_uri with state", async () => {
    const tc = await backchannelClient();
    const { jar, idToken } = await signedInToApp(tc);
    const res = await call(server.url, jar, endSessionUrl({ id_token_hint: idToken, post_logout_redirect_uri: LOGGED_OUT, state: "st-1" }));
    expect(res.status).toBe(303);
    await res.body?.cancel();
    const target = new URL(res.headers.get("location")!);
    expect(target.origin + target.pathname).toBe(LOGGED_OUT);
    expect(target.searchParams.get("state")).toBe("st-1");
    expect(await sessionOf(jar)).toBeNull();
    // Signed out of Vestibule: the app is told on the back channel too.
    expect(await queued()).toHaveLength(1);
  });

  it("asks without a hint, with another session's hint, an expired hint or an invalid one", async () => {
    const tc = await backchannelClient();
    const { jar, claims } = await signedInToApp(tc);
    // The same user in another browser: its ID token names that browser's session.
    const { idToken: othersHint } = await signedInToApp(tc);
    const key = await signingKey();
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ sid: claims.sid, auth_time: now - 7200 })
      .setProtectedHeader({ alg: "RS256", kid: key.kid!, typ: "JWT" })
      .setIssuer(server.url)
      .setAudience(tc.client.client_id)
      .setSubject(userId)
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 3600)
      .sign(await importJWK(key, "RS256"));
    expect(decodeProtectedHeader(expired).kid).toBe(key.kid);
    const cases: [string, Record<string, string>][] = [
      ["no hint", {}],
      ["another session's hint", { id_token_hint: othersHint, post_logout_redirect_uri: LOGGED_OUT }],
      ["an expired hint", { id_token_hint: expired, post_logout_redirect_uri: LOGGED_OUT }],
      ["an invalid hint", { id_token_hint: `${othersHint.slice(0, -8)}AAAAAAAA` }],
      ["not a token", { id_token_hint: "not-a-token" }],
    ];
    for (const [what, params] of cases) {
      const page = await follow(server, jar, endSessionUrl(params));
      expect(page.status, what).toBe(200);
      expect(page.html, what).toContain('id="provider-logout-form"');
      expect(await sessionOf(jar), what).not.toBeNull();
    }
    expect(await queued()).toEqual([]);
  });

  it("the question names the account and the app that asked; a visitor signed in nowhere is told they are signed out, or sent on to the app's registered address", async () => {
    const tc = await backchannelClient();
    const { jar } = await signedInToApp(tc);
    const asked = await follow(server, jar, endSessionUrl({ client_id: tc.client.client_id, post_logout_redirect_uri: LOGGED_OUT }));
    expect(asked.html).toContain('id="provider-logout-form"');
    expect(asked.html).toMatch(/<p id="provider-logout-account">You are signed in as <bdi dir="ltr" class="ltr">ada@example.com<\/bdi>\.<\/p>/);
    expect(asked.html).toContain('id="provider-logout-app"');

    const nobody = new CookieJar();
    const told = await follow(server, nobody, endSessionUrl({}));
    expect(told.status).toBe(200);
    expect(told.html).not.toContain('id="provider-logout-form"');
    expect(told.html).toContain("You are signed out.");
    const sent = await call(server.url, new CookieJar(), endSessionUrl({ client_id: tc.client.client_id, post_logout_redirect_uri: LOGGED_OUT, state: "st-2" }));
    expect(sent.status).toBe(303);
    await sent.body?.cancel();
    const target = new URL(sent.headers.get("location")!);
    expect(target.origin + target.pathname).toBe(LOGGED_OUT);
    expect(target.searchParams.get("state")).toBe("st-2");
  });
});
