// Vestibule's OAuth provider driven by a real client (oauth4webapi) over HTTP, on both databases:
// metadata, the code flow with PKCE through Vestibule's sign-in and consent pages, offline_access
// without prompt=consent, `iss` on every authorization answer (errors too), the redirect URI
// matrix, refusal of what the engine must never do, and the provider off.
import * as oauth from "oauth4webapi";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { engineSafetyProblems, getEngine } from "../../../app/auth/provider/engine.server";
import { PrismaAdapter } from "../../../app/auth/provider/adapter.server";
import { GRANT_CHECK_MS } from "../../../app/auth/provider/bearer.server";
import { metricsResponse } from "../../../app/auth/core/metrics.server";
import { createUser, PASSWORD, withEnv } from "../../support/auth";
import { call } from "../../support/app-client";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { CookieJar } from "../../support/http";
import { startProviderServer, type ProviderServer } from "../../support/provider-server";
import { answerConsent, authorizationUrl, authorize, codeFlow, discover, follow, formFields, insecure, signedInBrowser, testClient } from "../../support/provider-flow";

let server: ProviderServer;
beforeAll(async () => {
  // Three codes typed at /device per client address: the device test types exactly that many.
  server = await startProviderServer({ AUTH_RATE_LIMIT_DEVICE_CODE_CLIENT: "3/900" });
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  await resetDatabase();
  await createUser("ada@example.com", "Ada");
});

describe(`the OAuth provider on ${dbLabel}`, () => {
  it("publishes one metadata document at both well-known URLs, issuer = AUTH_URL, S256 only, offline_access, iss in answers", async () => {
    const oidc = await (await fetch(`${server.url}/.well-known/openid-configuration`)).json();
    const as = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json();
    expect(as).toEqual(oidc);
    expect(oidc).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      userinfo_endpoint: `${server.url}/oauth/userinfo`,
      jwks_uri: `${server.url}/oauth/jwks`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      introspection_endpoint: `${server.url}/oauth/introspect`,
      end_session_endpoint: `${server.url}/oauth/end_session`,
      device_authorization_endpoint: `${server.url}/oauth/device_authorization`,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code"],
      authorization_response_iss_parameter_supported: true,
    });
    // No DPoP (requireBearer checks no proofs, ADR 176) and no PAR (no route of its own): neither is advertised.
    expect(oidc.dpop_signing_alg_values_supported).toBeUndefined();
    expect(oidc.pushed_authorization_request_endpoint).toBeUndefined();
    expect((await fetch(`${server.url}/oauth/par`, { method: "POST" })).status).not.toBe(201);
    expect(oidc.scopes_supported).toEqual(expect.arrayContaining(["openid", "offline_access", "email", "profile"]));
    // Dynamic registration is off unless AUTH_PROVIDER_REGISTRATION=open.
    expect(oidc.registration_endpoint).toBeUndefined();
    const jwks = await (await fetch(`${server.url}/oauth/jwks`)).json();
    expect(jwks.keys.map((k: { alg: string }) => k.alg).sort()).toEqual(["ES256", "RS256"]);
    expect(JSON.stringify(jwks)).not.toMatch(/"d":/);
  });

  it("a request naming no scope is processed with the default one, openid (OAuth 2.1 section 3.2.2.1): asked on the consent page, then the token's scope", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const request = await authorizationUrl(as, tc, { scope: "", resource: `${server.url}/mcp` });
    expect(request.url.searchParams.has("scope")).toBe(false);
    const consent = await follow(server, jar, request.url);
    expect(consent.url.pathname).toMatch(/^\/oauth\/consent\//);
    // The page names what the default asks for: who the user is.
    expect(consent.html).toContain(`data-scope="openid"`);
    const allowed = await answerConsent(server, jar, consent, "allow");
    const params = oauth.validateAuthResponse(as, tc.client, allowed.url, request.state);
    const response = await oauth.authorizationCodeGrantRequest(as, tc.client, tc.auth, params, tc.redirectUri, request.verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(as, tc.client, response, { expectedNonce: request.nonce });
    expect(tokens.scope).toBe("openid");
    expect(tokens.refresh_token).toBeUndefined();
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: `${server.url}/mcp`, scope: "openid" });
  });

  it("a scope given twice is not taken for none: the engine refuses the request (invalid_request), it does not default", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const request = await authorizationUrl(as, tc);
    request.url.searchParams.append("scope", "email");
    const answer = await follow(server, jar, request.url);
    expect(answer.url.origin).not.toBe(server.url);
    expect(answer.url.searchParams.get("error")).toBe("invalid_request");
    expect(answer.url.searchParams.get("code")).toBeNull();
  });

  it("after Allow, the way back to the app is a page that goes on by itself (meta refresh and a link), never a redirect a form's CSP could block", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const request = await authorizationUrl(as, tc);
    const consent = await follow(server, jar, request.url);
    expect(consent.url.pathname).toMatch(/^\/oauth\/consent\//);
    const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(consent.html ?? "")![1]!;
    const allowed = await call(server.url, jar, consent.url.pathname, { body: { csrfToken, decision: "allow" } });
    const resume = new URL(allowed.headers.get("location")!, server.url);
    expect(resume.origin).toBe(server.url);
    expect(resume.pathname).toMatch(/^\/oauth\/authorize\//);
    const back = await call(server.url, jar, resume.pathname + resume.search);
    expect(back.status).toBe(200);
    expect(back.headers.get("location")).toBeNull();
    expect(back.headers.get("referrer-policy")).toBe("no-referrer");
    expect(back.headers.get("cache-control")).toContain("no-store");
    const html = await back.text();
    const refresh = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(html)?.[1]?.replaceAll("&amp;", "&");
    const link = /id="provider-continue"|href="([^"]+)" id="provider-continue"/.exec(html);
    expect(link).not.toBeNull();
    const onward = new URL(refresh!);
    expect(onward.href.startsWith(tc.redirectUri)).toBe(true);
    expect(onward.searchParams.get("code")).toEqual(expect.any(String));
    expect(onward.searchParams.get("iss")).toBe(server.url);
    // In the app's shell, the app's host isolated left to right in its sentences (ADR 161).
    expect(html).toContain('<header class="site-header">');
    expect(html).toMatch(/<link rel="stylesheet" href="[^"]+\.css">/);
    expect(html).toContain(`<bdi dir="ltr" class="ltr">${new URL(tc.redirectUri).host}</bdi>`);
    expect(html).toMatch(/class="button" id="provider-continue"|id="provider-continue" class="button"/);
  });

  it("code + PKCE through the sign-in and consent pages: tokens, a refresh token for offline_access without prompt=consent, amr/acr in the ID token; consent remembered", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const first = await codeFlow(server, as, tc, jar);
    expect(first.consentShown).toBe(true);
    expect(first.callback.searchParams.get("iss")).toBe(server.url);
    expect(first.tokens.refresh_token).toEqual(expect.any(String));
    const claims = oauth.getValidatedIdTokenClaims(first.tokens)!;
    const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } });
    expect(claims).toMatchObject({ iss: server.url, sub: user.id, email: "ada@example.com", amr: ["pwd"], acr: "aal1" });
    expect(typeof claims.auth_time).toBe("number");
    expect(await testDb().authEvent.count({ where: { type: "oauth-consent", userId: user.id } })).toBe(1);
    // The first grant to an app is a security notice to the owner.
    expect(await testDb().mailQueue.count({ where: { kind: "app-allowed", recipient: "ada@example.com" } })).toBe(1);

    // The same app, the same scopes: no consent page this time.
    const second = await codeFlow(server, as, tc, jar);
    expect(second.consentShown).toBe(false);
    expect(second.tokens.refresh_token).toEqual(expect.any(String));
    // A new scope is asked for again.
    const third = await codeFlow(server, as, tc, jar, { scope: "openid email profile offline_access" });
    expect(third.consentShown).toBe(true);
    expect(await testDb().mailQueue.count({ where: { kind: "app-allowed" } })).toBe(1);
    // Each token answer is counted for /metrics.
    const token = "m".repeat(40);
    const undo = withEnv({ METRICS_TOKEN: token });
    const metrics = await (await metricsResponse(new Request(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } })))!.text();
    undo();
    // The counter is the process's: other files run in the same worker count too, so at least this one's three.
    const issued = Number(metrics.match(/vestibule_oauth_tokens_total\{grant="authorization_code",outcome="issued"\} (\d+)/)?.[1]);
    expect(issued).toBeGreaterThanOrEqual(3);
  });

  it("a signed-out visitor is sent to Vestibule's sign-in page with a way back, and login_hint fills the address", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const request = await authorizationUrl(as, tc, { login_hint: "ada@example.com" });
    const jar = new CookieJar();
    const step = await follow(server, jar, request.url);
    expect(step.url.pathname).toBe("/auth/signin");
    expect(step.url.searchParams.get("callbackUrl")).toMatch(/^\/oauth\/consent\/[\w-]+$/);
    expect(step.url.searchParams.get("email")).toBe("ada@example.com");
  });

  it("prompt=login and an exceeded max_age send the signed-in visitor through Vestibule's re-authentication page", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const variants: Record<string, string>[] = [{ prompt: "login" }, { max_age: "0" }];
    for (const extra of variants) {
      const request = await authorizationUrl(as, tc, extra);
      const step = await follow(server, jar, request.url);
      expect(step.url.pathname, JSON.stringify(extra)).toBe("/auth/reauth");
      const callbackUrl = step.url.searchParams.get("callbackUrl")!;
      expect(callbackUrl).toMatch(/^\/oauth\/consent\/[\w-]+$/);
      // Coming back without having proved anything: sent to the re-authentication page again.
      expect((await follow(server, jar, callbackUrl)).url.pathname).toBe("/auth/reauth");
      // The password again, then on to the app; the ID token's auth_time is the re-authentication's.
      const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(step.html!)![1]!;
      const proved = await call(server.url, jar, "/auth/reauth", { body: { csrfToken, callbackUrl, provider: "credentials", password: PASSWORD } });
      expect([302, 303]).toContain(proved.status);
      const { callback } = await authorize(server, jar, { ...request, url: new URL(proved.headers.get("location")!, server.url) });
      const params = oauth.validateAuthResponse(as, tc.client, callback, request.state);
      const before = Math.floor(Date.now() / 1000) - 5;
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        tc.client,
        await oauth.authorizationCodeGrantRequest(as, tc.client, tc.auth, params, tc.redirectUri, request.verifier, insecure),
        { expectedNonce: request.nonce, maxAge: extra.max_age ? Number(extra.max_age) + 10 : undefined },
      );
      expect(oauth.getValidatedIdTokenClaims(tokens)!.auth_time).toBeGreaterThanOrEqual(before);
    }
    // A max_age the session meets goes straight on to the app (consent remembered from above).
    const { callback } = await authorize(server, jar, await authorizationUrl(as, tc, { max_age: "3600" }));
    expect(callback.searchParams.get("code")).toEqual(expect.any(String));
  });

  it("device authorization (RFC 8628): an 8-letter user code without vowels, XXXX-XXXX, interval 5 s, polling answers authorization_pending", async () => {
    const as = await discover(server);
    const tc = await testClient({ redirectUris: [], grants: ["device_code"], public: true });
    const started = await oauth.processDeviceAuthorizationResponse(as, tc.client, await oauth.deviceAuthorizationRequest(as, tc.client, tc.auth, { scope: "openid" }, insecure));
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.interval).toBe(5);
    expect(started.expires_in).toBeLessThanOrEqual(600);
    const poll = await oauth.deviceCodeGrantRequest(as, tc.client, tc.auth, started.device_code, insecure);
    await expect(oauth.processDeviceCodeResponse(as, tc.client, poll)).rejects.toMatchObject({ error: "authorization_pending" });

    // The user, signed in, types the code at /device, checks it, then allows the app on the consent page.
    expect(started.verification_uri).toBe(`${server.url}/device`);
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const entry = await follow(server, jar, "/device");
    expect(entry.html).toContain('id="device-code-form"');
    const wrong = await call(server.url, jar, "/device", { body: { ...formFields(entry.html!, "device-code-form"), user_code: "BCDF-GHJK" } });
    // Post/Redirect/Get: a wrong code is a redirect back to /device with the reason, so Back never posts again.
    expect(wrong.status).toBe(303);
    expect(wrong.headers.get("location")).toMatch(/\/device\?error=wrong-code$/);
    const again = await follow(server, jar, new URL(wrong.headers.get("location")!, server.url));
    const retry = again.html!;
    expect(retry).toContain('id="device-error"');
    expect(retry).toContain("That code is not right, or it has expired.");
    const typed = await call(server.url, jar, "/device", { body: { ...formFields(retry, "device-code-form"), user_code: started.user_code.toLowerCase() } });
    const confirmHtml = await typed.text();
    expect(confirmHtml).toContain(started.user_code);
    // The confirmation in the app's shell: the card, Allow primary and Deny secondary (ADR 161).
    expect(confirmHtml).toContain('<section class="card" aria-labelledby="card-title">');
    expect(confirmHtml).toMatch(/<form[^>]*id="device-confirm-form">.*<button type="submit" class="button">/);
    expect(confirmHtml).toMatch(/<form[^>]*id="device-abort-form">.*<button type="submit" class="button secondary">/);
    const confirmed = await call(server.url, jar, "/device", { body: formFields(confirmHtml, "device-confirm-form") });
    expect(confirmed.status).toBe(303);
    // The Allow here is the consent: no second page asks again.
    const done = await follow(server, jar, new URL(confirmed.headers.get("location")!, server.url));
    expect(done.url.pathname).toMatch(/^\/device\//);
    expect(done.html).toContain("Device connected");
    const tokens = await oauth.processDeviceCodeResponse(as, tc.client, await oauth.deviceCodeGrantRequest(as, tc.client, tc.auth, started.device_code, insecure));
    expect(tokens.access_token).toEqual(expect.any(String));
    // Codes typed at /device are limited per client address (DEVICE_CODE_CLIENT): the fourth is refused.
    const tooMany = await call(server.url, jar, "/device", { body: { ...formFields(retry, "device-code-form"), user_code: "BCDF-GHJK" } });
    expect(tooMany.status).toBe(429);
    expect(tooMany.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(await tooMany.text()).toContain("Too many codes");
  });

  it("RP-initiated logout asks first, then signs the user out of Vestibule too", async () => {
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    // Signed in to an app first, so the provider has a session to end.
    const tc = await testClient({ redirectUris: ["https://app.example.com/cb"], redirectUri: "https://app.example.com/cb" });
    await codeFlow(server, await discover(server), tc, jar);
    const page = await follow(server, jar, "/oauth/end_session");
    expect(page.status).toBe(200);
    expect(page.html).toContain('id="provider-logout-form"');
    const action = /action="([^"]+)"/.exec(page.html!)![1]!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html!)![1]!;
    const res = await call(server.url, jar, new URL(action.replaceAll("&amp;", "&"), server.url).pathname, { body: { xsrf, logout: "yes" } });
    expect(res.status).toBeLessThan(400);
    await res.body?.cancel();
    const session = await (await call(server.url, jar, "/auth/session")).json();
    expect(session).toBeNull();
  });

  it("RP-initiated logout with no sign-in through an app asks on Vestibule's page too, in the app's shell, not the engine's page that submits itself", async () => {
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const page = await follow(server, jar, "/oauth/end_session");
    expect(page.status).toBe(200);
    expect(page.html).toContain('id="provider-logout-form"');
    expect(page.html).toContain('class="site-header"');
    expect(page.html).toMatch(/<link rel="stylesheet" href="[^"]+\.css"/);
    expect(page.html).not.toContain("Submitting Callback");
    expect(page.html).not.toContain("<script");
    // Nothing ended before the answer.
    const session = await (await call(server.url, jar, "/auth/session")).json();
    expect(session).not.toBeNull();
  });

  it("an answer the visitor denies goes back with access_denied, state and iss", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const request = await authorizationUrl(as, tc);
    const page = await follow(server, jar, request.url);
    expect(page.url.pathname).toMatch(/^\/oauth\/consent\//);
    expect(page.html).toContain("Notes");
    expect(page.html).toContain("127.0.0.1:43111");
    const back = await answerConsent(server, jar, page, "deny");
    expect(back.url.origin + back.url.pathname).toBe("http://127.0.0.1:43111/callback");
    expect(Object.fromEntries(back.url.searchParams)).toMatchObject({ error: "access_denied", state: request.state, iss: server.url });
    expect(() => oauth.validateAuthResponse(as, tc.client, back.url, request.state)).toThrow();
  });

  it("PKCE is required of every client, confidential ones too, and only S256: errors carry state and iss", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const variants: Record<string, string>[] = [{ code_challenge: "", code_challenge_method: "" }, { code_challenge_method: "plain" }];
    for (const extra of variants) {
      const request = await authorizationUrl(as, tc, extra);
      const step = await follow(server, jar, request.url);
      expect(step.status).toBe(0);
      expect(step.url.searchParams.get("error")).toBe("invalid_request");
      expect(step.url.searchParams.get("state")).toBe(request.state);
      expect(step.url.searchParams.get("iss")).toBe(server.url);
    }
  });

  it("redirect URIs match exactly, except any port on a loopback one; every trick gets an error page, never a redirect", async () => {
    const as = await discover(server);
    const tc = await testClient({ redirectUris: ["http://127.0.0.1/callback", "https://app.example.com/cb"] });
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const refused = [
      "http://127.0.0.1:1@evil.example/callback",
      "http://127.1:43111/callback",
      "http://localhost.evil.example/callback",
      "http://127.0.0.1:43111/callback/",
      "http://127.0.0.1:43111/callback#x",
      "http://127.0.0.1:43111/other",
      "https://app.example.com/cb/",
      "https://app.example.com/cb#frag",
      "https://app.example.com:444/cb",
      "https://APP.example.com.evil.example/cb",
    ];
    for (const redirectUri of refused) {
      const request = await authorizationUrl(as, { ...tc, redirectUri });
      const step = await follow(server, jar, request.url);
      expect(step.status, redirectUri).toBe(400);
      expect(step.html, redirectUri).toContain("This sign-in request cannot go on");
    }
    // Any port on the loopback URI (RFC 8252): the client is native, its redirect URIs being loopback or https.
    const loopback = await testClient({ redirectUris: ["http://127.0.0.1/callback"], redirectUri: "http://127.0.0.1:50505/callback" });
    const { callback } = await authorize(server, jar, await authorizationUrl(as, loopback));
    expect(callback.host).toBe("127.0.0.1:50505");
    // An unknown client: an error page too.
    const unknown = await follow(server, jar, (await authorizationUrl(as, { ...tc, client: { client_id: "nobody" } })).url);
    expect(unknown.status).toBe(400);
  });

  it("an authorization finished in another browser (an e-mailed link) starts again there instead of failing", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const request = await authorizationUrl(as, tc);
    const first = await follow(server, new CookieJar(), request.url);
    const consentPath = first.url.searchParams.get("callbackUrl")!;
    // The other browser signed in, with no interaction cookie, opens the way back.
    const other = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const res = await call(server.url, other, consentPath);
    expect(res.status).toBe(302);
    const restart = new URL(res.headers.get("location")!);
    expect(restart.pathname).toBe("/oauth/authorize");
    expect(restart.searchParams.get("state")).toBe(request.state);
    expect(restart.searchParams.get("code_challenge")).toBe(request.url.searchParams.get("code_challenge"));
    const { callback } = await authorize(server, other, { ...request, url: restart });
    const params = oauth.validateAuthResponse(as, tc.client, callback, request.state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      tc.client,
      await oauth.authorizationCodeGrantRequest(as, tc.client, tc.auth, params, tc.redirectUri, request.verifier, insecure),
      { expectedNonce: request.nonce },
    );
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it("signing out of Vestibule ends the provider's session too: prompt=none then answers login_required", async () => {
    const as = await discover(server);
    // A web client: a native one is never answered without the user (prompt=none is interaction_required).
    const tc = await testClient({ redirectUris: ["https://app.example.com/cb"], redirectUri: "https://app.example.com/cb" });
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    await codeFlow(server, as, tc, jar);
    const silent = await follow(server, jar, (await authorizationUrl(as, tc, { prompt: "none", scope: "openid email" })).url);
    expect(silent.url.searchParams.get("code")).toEqual(expect.any(String));
    const csrf = ((await (await call(server.url, jar, "/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
    await (await call(server.url, jar, "/auth/signout", { body: { csrfToken: csrf } })).body?.cancel();
    const after = await follow(server, jar, (await authorizationUrl(as, tc, { prompt: "none", scope: "openid email" })).url);
    expect(after.url.searchParams.get("error")).toBe("login_required");
    expect(after.url.searchParams.get("iss")).toBe(server.url);
  });

  it("JWT access tokens for a resource: aud is that resource (normalised), typ at+jwt; an unknown resource is invalid_target", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const { tokens } = await codeFlow(server, as, tc, jar, { resource: `${server.url.toUpperCase().replace("HTTP://", "http://")}/mcp/` });
    const header = JSON.parse(Buffer.from(tokens.access_token.split(".")[0]!, "base64url").toString());
    expect(header.typ).toBe("at+jwt");
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: `${server.url}/mcp`, client_id: tc.client.client_id, iss: server.url });
    const bad = await follow(server, jar, (await authorizationUrl(as, tc, { resource: "https://elsewhere.example/api" })).url);
    expect(bad.url.searchParams.get("error")).toBe("invalid_target");
    expect(bad.url.searchParams.get("iss")).toBe(server.url);
  });

  it("a user's access token names its grant (gid): once that grant is revoked the token is refused, even after the user allows the app again", async () => {
    const as = await discover(server);
    const tc = await testClient();
    const jar = await signedInBrowser(server, "ada@example.com", PASSWORD);
    const me = (token: string) => fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${token}` } });
    const first = await codeFlow(server, as, tc, jar, { resource: `${server.url}/api` });
    const gid = decodeJwt(first.tokens.access_token).gid;
    expect(gid).toEqual(expect.any(String));
    expect(await testDb().oAuthPayload.count({ where: { kind: "Grant", id: gid as string } })).toBe(1);
    expect((await me(first.tokens.access_token)).status).toBe(200);
    const { provider } = await getEngine();
    await ((await provider.Grant.find(gid as string)) as unknown as { destroy(): Promise<void> }).destroy();
    // Allowed again: a new grant, a new token; the old one stays refused.
    const second = await codeFlow(server, as, tc, jar, { resource: `${server.url}/api` });
    expect(decodeJwt(second.tokens.access_token).gid).not.toBe(gid);
    // Within the bound: an instance trusts a grant it found live for GRANT_CHECK_MS, as long as
    // the poll's default timeout (which made this fail when the check came a moment late).
    await expect.poll(async () => (await me(first.tokens.access_token)).status, { timeout: 5 * GRANT_CHECK_MS }).toBe(401);
    expect((await me(second.tokens.access_token)).status).toBe(200);
  });

  it("the engine never runs with the library's development shortcuts: its storage is the database, its dev interactions off", async () => {
    const { config } = await getEngine();
    expect(engineSafetyProblems(config)).toEqual([]);
    expect(engineSafetyProblems({ ...config, features: { ...config.features, devInteractions: { enabled: true } } })).toEqual([
      expect.stringMatching(/development interactions/),
    ]);
    expect(engineSafetyProblems({ ...config, adapter: undefined })).toEqual([expect.stringMatching(/in-memory adapter/)]);
    expect(config.adapter).toBe(PrismaAdapter);
    // The dev interaction pages do not exist.
    expect((await fetch(`${server.url}/interaction/anything`)).status).toBe(404);
    // What an authorization left is in the database.
    const as = await discover(server);
    await follow(server, new CookieJar(), (await authorizationUrl(as, await testClient())).url);
    expect(await testDb().oAuthPayload.count({ where: { kind: "Interaction" } })).toBe(1);
  });
});
