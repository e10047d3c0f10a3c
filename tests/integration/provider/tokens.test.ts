// The provider's grants with a real client (oauth4webapi), on both databases: refresh with
// rotation, the grace for a lost answer, reuse detection after it, a code used twice, the same code
// and the same refresh token redeemed at once (one conditional UPDATE decides), client
// credentials, userinfo, introspection and revocation, and a disabled user refused.
import { createHash } from "node:crypto";
import * as oauth from "oauth4webapi";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { revokeAllSessions, revokeUserSessions } from "../../../app/auth/core/session.server";
import { deleteAccount } from "../../../app/auth/accounts/deletion.server";
import { authRequest } from "../../../app/auth/core/request.server";
import { createUser, PASSWORD } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { authorizationUrl, authorize, codeFlow, discover, insecure, signedInBrowser, testClient, type TestClient } from "../../support/provider-flow";

let server: ProviderServer;
let as: oauth.AuthorizationServer;
beforeAll(async () => {
  server = await startProviderServer({ AUTH_PROVIDER_REFRESH_GRACE: "30" });
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  await createUser("ada@example.com", "Ada");
  as = await discover(server);
});

async function refresh(tc: TestClient, token: string) {
  return oauth.refreshTokenGrantRequest(as, tc.client, tc.auth, token, insecure);
}
async function tokensFor(tc: TestClient) {
  const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
  return (await codeFlow(server, as, tc, jar)).tokens;
}
/** Makes the database refuse (or accept again) the rows of access tokens: a trigger, on either database. */
async function refuseAccessTokenRows(refuse: boolean) {
  if (dbLabel === "sqlite") {
    await testDb().$executeRawUnsafe(
      refuse
        ? `CREATE TRIGGER "refuse_access_tokens" BEFORE INSERT ON "OAuthPayload" WHEN NEW."kind" = 'AccessToken' BEGIN SELECT RAISE(ABORT, 'refused'); END`
        : `DROP TRIGGER IF EXISTS "refuse_access_tokens"`,
    );
    return;
  }
  if (refuse) {
    await testDb().$executeRawUnsafe(`CREATE OR REPLACE FUNCTION refuse_access_tokens() RETURNS trigger AS $$ BEGIN IF NEW."kind" = 'AccessToken' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await testDb().$executeRawUnsafe(`CREATE TRIGGER "refuse_access_tokens" BEFORE INSERT ON "OAuthPayload" FOR EACH ROW EXECUTE FUNCTION refuse_access_tokens()`);
  } else {
    await testDb().$executeRawUnsafe(`DROP TRIGGER IF EXISTS "refuse_access_tokens" ON "OAuthPayload"`);
    await testDb().$executeRawUnsafe(`DROP FUNCTION IF EXISTS refuse_access_tokens()`);
  }
}
const liveRefreshTokens = () => testDb().oAuthPayload.count({ where: { kind: "RefreshToken", consumedAt: null } });

describe(`the provider's grants on ${dbLabel}`, () => {
  it("a refresh rotates the refresh token; the rotated one presented again within the grace gets the same answer", async () => {
    const tc = await testClient();
    const first = await tokensFor(tc);
    const r1 = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, first.refresh_token!));
    expect(r1.refresh_token).toEqual(expect.any(String));
    expect(r1.refresh_token).not.toBe(first.refresh_token);
    // The answer was lost; the client tries again with the same token.
    const again = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, first.refresh_token!));
    expect(again.refresh_token).toBe(r1.refresh_token);
    expect(again.access_token).toBe(r1.access_token);
    expect(await liveRefreshTokens()).toBe(1);
    // Introspection sees the rotated token as it is: no longer active (the grace is for refreshes only).
    const rotated = await oauth.processIntrospectionResponse(as, tc.client, await oauth.introspectionRequest(as, tc.client, tc.auth, first.refresh_token!, insecure));
    expect(rotated.active).toBe(false);
    // And the new one works.
    const r2 = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, r1.refresh_token!));
    expect(r2.refresh_token).not.toBe(r1.refresh_token);
  });

  it("after the grace a rotated refresh token is a reuse: refused, and the whole grant is revoked", async () => {
    const tc = await testClient();
    const first = await tokensFor(tc);
    const r1 = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, first.refresh_token!));
    // The grace has passed (the rotation is moved back past it).
    await testDb().oAuthPayload.updateMany({ where: { kind: "RefreshToken", consumedAt: { not: null } }, data: { consumedAt: new Date(Date.now() - 31_000) } });
    await testDb().oAuthPayload.deleteMany({ where: { kind: "RefreshAnswer" } });
    const reuse = await refresh(tc, first.refresh_token!);
    await expect(oauth.processRefreshTokenResponse(as, tc.client, reuse)).rejects.toMatchObject({ error: "invalid_grant" });
    // The thief's (or the client's) newer token is dead too.
    await expect(oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, r1.refresh_token!))).rejects.toMatchObject({ error: "invalid_grant" });
    expect(await testDb().oAuthPayload.count({ where: { kind: "Grant" } })).toBe(0);
  });

  it("the grace answers only the client the token was issued to", async () => {
    const tc = await testClient();
    const other = await testClient({ name: "Other" });
    const first = await tokensFor(tc);
    await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, first.refresh_token!));
    const stolen = await oauth.refreshTokenGrantRequest(as, other.client, other.auth, first.refresh_token!, insecure);
    await expect(oauth.processRefreshTokenResponse(as, other.client, stolen)).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("the same refresh token redeemed twice at once: both get the one answer, one live token family", async () => {
    const tc = await testClient();
    const first = await tokensFor(tc);
    const answers = await Promise.all([refresh(tc, first.refresh_token!), refresh(tc, first.refresh_token!), refresh(tc, first.refresh_token!)]);
    const bodies = await Promise.all(answers.map((r) => oauth.processRefreshTokenResponse(as, tc.client, r)));
    expect(new Set(bodies.map((b) => b.refresh_token)).size).toBe(1);
    expect(await liveRefreshTokens()).toBe(1);
  });

  it("a code redeemed twice, one after the other or at once: one answer, and the second use revokes what the first got", async () => {
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    for (const atOnce of [false, true]) {
      const request = await authorizationUrl(as, tc);
      const { callback } = await authorize(server, jar, request);
      const params = oauth.validateAuthResponse(as, tc.client, callback, request.state);
      const redeem = () => oauth.authorizationCodeGrantRequest(as, tc.client, tc.auth, params, tc.redirectUri, request.verifier, insecure);
      const responses = atOnce ? await Promise.all([redeem(), redeem()]) : [await redeem(), await redeem()];
      const outcomes = await Promise.all(
        responses.map((r) => oauth.processAuthorizationCodeResponse(as, tc.client, r, { expectedNonce: request.nonce }).then((t) => t, (e: { error?: string }) => e.error)),
      );
      const won = outcomes.filter((o) => typeof o !== "string") as oauth.TokenEndpointResponse[];
      expect(won, `at once: ${atOnce}`).toHaveLength(1);
      expect(outcomes.filter((o) => o === "invalid_grant")).toHaveLength(1);
      // Whatever the winner got is revoked: its refresh token no longer works.
      await expect(oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, won[0]!.refresh_token!))).rejects.toMatchObject({ error: "invalid_grant" });
    }
  });

  it("an answer whose tokens cannot be written is a server_error, nothing of it stored, and the refresh token works again for the client's retry", async () => {
    const tc = await testClient();
    const first = await tokensFor(tc);
    const rows = () => testDb().oAuthPayload.count({ where: { kind: { in: ["AccessToken", "RefreshToken"] } } });
    const before = await rows();
    // The database refuses the access token's row (as a failing write would): the whole answer's write fails.
    await refuseAccessTokenRows(true);
    try {
      const res = await refresh(tc, first.refresh_token!);
      expect(res.status).toBe(500);
      expect(res.headers.get("cache-control")).toContain("no-store");
      expect(await res.json()).toMatchObject({ error: "server_error" });
      expect(await rows()).toBe(before);
    } finally {
      await refuseAccessTokenRows(false);
    }
    // Given back: the retry is a refresh, not a replay (no grace wait, no revoked grant).
    const retry = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, first.refresh_token!));
    expect(retry.refresh_token).toBeTruthy();
    const next = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, retry.refresh_token!));
    expect(next.access_token).toBeTruthy();
  });

  it("userinfo, introspection and revocation with an opaque access token", async () => {
    const tc = await testClient();
    const tokens = await tokensFor(tc);
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } });
    const info = await oauth.processUserInfoResponse(as, tc.client, user.id, await oauth.userInfoRequest(as, tc.client, tokens.access_token, insecure));
    expect(info).toMatchObject({ sub: user.id, email: "ada@example.com" });
    const active = await oauth.processIntrospectionResponse(as, tc.client, await oauth.introspectionRequest(as, tc.client, tc.auth, tokens.refresh_token!, insecure));
    expect(active).toMatchObject({ active: true, client_id: tc.client.client_id, sub: user.id });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, tc.client, tc.auth, tokens.refresh_token!, insecure));
    const revoked = await oauth.processIntrospectionResponse(as, tc.client, await oauth.introspectionRequest(as, tc.client, tc.auth, tokens.refresh_token!, insecure));
    expect(revoked.active).toBe(false);
  });

  it("no token is kept as itself: rows are keyed by its SHA-256 and their payloads do not hold it, and it still works", async () => {
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const { tokens, callback } = await codeFlow(server, as, tc, jar, { scope: "openid email offline_access" });
    const code = callback.searchParams.get("code")!;
    const r1 = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, tokens.refresh_token!));
    const rows = await testDb().oAuthPayload.findMany();
    const stored = JSON.stringify(rows);
    for (const secret of [code, tokens.access_token, tokens.refresh_token!, r1.access_token, r1.refresh_token!]) {
      expect(stored).not.toContain(secret);
    }
    const sha = (v: string) => createHash("sha256").update(v).digest("base64url");
    expect(rows.some((r) => r.kind === "RefreshToken" && r.id === sha(r1.refresh_token!))).toBe(true);
    // The hashed rows still answer: introspection, userinfo and the next refresh.
    const active = await oauth.processIntrospectionResponse(as, tc.client, await oauth.introspectionRequest(as, tc.client, tc.auth, r1.refresh_token!, insecure));
    expect(active.active).toBe(true);
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } });
    await oauth.processUserInfoResponse(as, tc.client, user.id, await oauth.userInfoRequest(as, tc.client, r1.access_token, insecure));
    const r2 = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, r1.refresh_token!));
    expect(r2.refresh_token).not.toBe(r1.refresh_token);
  });

  it("only the client a token was issued to may introspect it: another confidential client learns nothing", async () => {
    const tc = await testClient();
    const tokens = await tokensFor(tc);
    const other = await testClient({ name: "Other" });
    for (const token of [tokens.refresh_token!, tokens.access_token]) {
      const seen = await oauth.processIntrospectionResponse(as, other.client, await oauth.introspectionRequest(as, other.client, other.auth, token, insecure));
      expect(seen).toEqual({ active: false });
    }
    const own = await oauth.processIntrospectionResponse(as, tc.client, await oauth.introspectionRequest(as, tc.client, tc.auth, tokens.refresh_token!, insecure));
    expect(own.active).toBe(true);
  });

  it("client credentials for a confidential client registered with it: sub is the client, no refresh token; a public client cannot have it", async () => {
    const tc = await testClient({ redirectUris: [], grants: ["client_credentials"] });
    const response = await oauth.clientCredentialsGrantRequest(as, tc.client, tc.auth, { resource: `${server.url}/api` }, insecure);
    const tokens = await oauth.processClientCredentialsResponse(as, tc.client, response);
    expect(tokens.refresh_token).toBeUndefined();
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: tc.client.client_id, aud: `${server.url}/api`, client_id: tc.client.client_id });
    await expect(testClient({ public: true, grants: ["client_credentials"] })).rejects.toThrow(/confidential/);
    // A code-flow client without the grant is refused it.
    const plain = await testClient();
    const refused = await oauth.clientCredentialsGrantRequest(as, plain.client, plain.auth, {}, insecure);
    await expect(oauth.processClientCredentialsResponse(as, plain.client, refused)).rejects.toMatchObject({ status: 400, error: expect.stringMatching(/^(unauthorized_client|invalid_request)$/) });
  });

  it("sign out everywhere (and every other end of all of a user's sessions) revokes the user's grants and refresh tokens", async () => {
    const tc = await testClient();
    const tokens = await tokensFor(tc);
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } });
    await revokeUserSessions(user.id);
    await expect(oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, tokens.refresh_token!))).rejects.toMatchObject({ error: "invalid_grant" });
    expect(await testDb().oAuthPayload.count({ where: { accountId: user.id } })).toBe(0);
    // Another user's grant is left alone; ending everyone's sessions ends it too.
    await createUser("bob@example.com", "Bob");
    const bobJar = await signedInBrowser(server, "bob@example.com", PASSWORD);
    const bob = (await codeFlow(server, as, tc, bobJar)).tokens;
    await revokeUserSessions(user.id);
    const stillThere = await oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, bob.refresh_token!));
    await revokeAllSessions();
    await expect(oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, stillThere.refresh_token!))).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("deleting the account removes everything the user allowed apps", async () => {
    const tc = await testClient();
    const tokens = await tokensFor(tc);
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } });
    const grantIds = (await testDb().oAuthPayload.findMany({ where: { kind: "Grant", accountId: user.id } })).map((g) => g.id);
    expect(grantIds.length).toBeGreaterThan(0);
    const result = await deleteAccount(user.id, { source: "cli" }, { hooks: [], ar: authRequest(new Request(`${server.url}/`)) });
    expect(result.ok).toBe(true);
    expect(await testDb().oAuthPayload.count({ where: { OR: [{ accountId: user.id }, { grantId: { in: grantIds } }] } })).toBe(0);
    await expect(oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, tokens.refresh_token!))).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("a disabled user's refresh token is refused", async () => {
    const tc = await testClient();
    const tokens = await tokensFor(tc);
    await testDb().user.update({ where: { email: "ada@example.com" }, data: { disabledAt: new Date() } });
    await expect(oauth.processRefreshTokenResponse(as, tc.client, await refresh(tc, tokens.refresh_token!))).rejects.toMatchObject({ error: "invalid_grant" });
  });
});
