// /account "Apps with access" (docs/features/provider.md), on both databases: the app the user
// allowed, with its host and scopes, and Remove access ending its grant and refresh tokens.
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createUser, PASSWORD } from "../../support/auth";
import { call } from "../../support/app-client";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { codeFlow, discover, insecure, signedInBrowser, testClient } from "../../support/provider-flow";

let server: ProviderServer;
beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  await createUser("ada@example.com", "Ada");
});

describe(`apps with access on ${dbLabel}`, () => {
  it("lists the app the user allowed and removes its access", async () => {
    const as = await discover(server);
    const tc = await testClient({ name: "Notes", redirectUris: ["https://notes.example.com/cb"], redirectUri: "https://notes.example.com/cb" });
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const { tokens } = await codeFlow(server, as, tc, jar);

    const page = await (await call(server.url, jar, "/account")).text();
    expect(page).toContain('id="apps-heading"');
    expect(page).toContain(`data-client-id="${tc.client.client_id}"`);
    expect(page).toContain("notes.example.com");
    const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(page)![1]!;

    const res = await call(server.url, jar, "/account", { body: { csrfToken, intent: "revoke-app", clientId: tc.client.client_id } });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/account?updated=app-revoked");
    const refused = await oauth.refreshTokenGrantRequest(as, tc.client, tc.auth, tokens.refresh_token!, insecure);
    await expect(oauth.processRefreshTokenResponse(as, tc.client, refused)).rejects.toMatchObject({ error: "invalid_grant" });
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } });
    expect(await testDb().authEvent.count({ where: { type: "oauth-grant-revoked", userId: user.id } })).toBe(1);
    const after = await (await call(server.url, jar, "/account")).text();
    expect(after).not.toContain(`data-client-id="${tc.client.client_id}"`);
    // Again: nothing left to remove.
    const again = await call(server.url, jar, "/account", { body: { csrfToken, intent: "revoke-app", clientId: tc.client.client_id } });
    expect(again.status).toBe(404);
  });
});
