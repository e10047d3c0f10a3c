// Driving Vestibule's OAuth provider as a real client does: oauth4webapi for discovery, tokens and
// every check a client makes, and a browser without JavaScript (a cookie jar, redirects followed
// by hand) for the authorization: Vestibule's sign-in page, the consent page, back to the app.
import * as oauth from "oauth4webapi";
import { addClient, type NewClient } from "../../app/auth/provider/clients.server.ts";
import { call, credentialsSignIn } from "./app-client.ts";
import type { RunningApp } from "./browser.ts";
import { CookieJar } from "./http.ts";
import type { ProviderServer } from "./provider-server.ts";

export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export async function discover(server: ProviderServer): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.url);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...insecure }));
}

export type TestClient = { client: oauth.Client; auth: oauth.ClientAuth; secret: string | null; redirectUri: string };

/** A client added the operator's way; `redirectUri` is the one the tests authorize with. */
export async function testClient(overrides: Partial<NewClient> & { redirectUri?: string } = {}): Promise<TestClient> {
  const registered = overrides.redirectUris ?? ["http://127.0.0.1/callback"];
  const { client, secret } = await addClient({ name: "Notes", redirectUris: registered, source: "cli", ...overrides });
  return {
    client: { client_id: client.clientId, token_endpoint_auth_method: secret ? "client_secret_basic" : "none" },
    auth: secret ? oauth.ClientSecretBasic(secret) : oauth.None(),
    secret,
    redirectUri: overrides.redirectUri ?? "http://127.0.0.1:43111/callback",
  };
}

/** A browser signed in to Vestibule with a password. */
export async function signedInBrowser(server: ProviderServer, email: string, password: string): Promise<CookieJar> {
  const { res, jar } = await credentialsSignIn({ url: server.url } as RunningApp, email, password);
  if (res.status !== 302 && res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
  return jar;
}

export type Step = { url: URL; status: number; html?: string };

/**
 * Follows redirects within the server from `start` until the browser leaves it (the app's
 * redirect URI: returned without being fetched) or a page answers (returned with its HTML). The
 * page that sends the browser back to the app (a meta refresh) is followed like a redirect.
 */
export async function follow(server: ProviderServer, jar: CookieJar, start: string | URL): Promise<Step> {
  let url = new URL(start, server.url);
  for (let hops = 0; hops < 20; hops++) {
    if (url.origin !== server.url) return { url, status: 0 };
    const res = await call(server.url, jar, url.pathname + url.search);
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      url = new URL(res.headers.get("location")!, url);
      continue;
    }
    const html = await res.text();
    // The page back to the app after sign-in or consent goes on by itself, as a browser does (a meta refresh).
    const onward = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(html)?.[1];
    if (res.status === 200 && onward) {
      url = new URL(onward.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&"), url);
      continue;
    }
    return { url, status: res.status, html };
  }
  throw new Error("too many redirects");
}

/** The consent form's answer: Allow or Deny, with the page's CSRF token. */
export async function answerConsent(server: ProviderServer, jar: CookieJar, page: Step, decision: "allow" | "deny"): Promise<Step> {
  const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(page.html ?? "")?.[1];
  if (!csrfToken) throw new Error(`no consent form at ${page.url}: ${page.status}`);
  const res = await call(server.url, jar, page.url.pathname, { body: { csrfToken, decision } });
  await res.body?.cancel();
  if (res.status < 300 || res.status >= 400) throw new Error(`consent answered ${res.status}`);
  return follow(server, jar, new URL(res.headers.get("location")!, page.url));
}

export type Authorization = { url: URL; verifier: string; state: string; nonce: string };

/** An authorization request URL with PKCE S256, state and nonce; `extra` adds or overrides parameters. */
export async function authorizationUrl(as: oauth.AuthorizationServer, tc: TestClient, extra: Record<string, string> = {}): Promise<Authorization> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  const params: Record<string, string> = {
    client_id: tc.client.client_id,
    redirect_uri: tc.redirectUri,
    response_type: "code",
    scope: "openid email offline_access",
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) if (v !== "") url.searchParams.set(k, v);
  return { url, verifier, state, nonce };
}

/** Authorizes in `jar`'s browser, allowing on the consent page if it is shown; the callback URL. */
export async function authorize(server: ProviderServer, jar: CookieJar, request: Authorization): Promise<{ callback: URL; consentShown: boolean }> {
  let step = await follow(server, jar, request.url);
  let consentShown = false;
  if (step.status === 200 && step.url.pathname.startsWith("/oauth/consent/")) {
    consentShown = true;
    step = await answerConsent(server, jar, step, "allow");
  }
  if (step.status !== 0) throw new Error(`authorization stopped at ${step.url} (${step.status}): ${step.html?.slice(0, 300)}`);
  return { callback: step.url, consentShown };
}

/** The code flow to the end: authorize, then redeem the code with oauth4webapi. */
export async function codeFlow(server: ProviderServer, as: oauth.AuthorizationServer, tc: TestClient, jar: CookieJar, extra: Record<string, string> = {}) {
  const request = await authorizationUrl(as, tc, extra);
  const { callback, consentShown } = await authorize(server, jar, request);
  const params = oauth.validateAuthResponse(as, tc.client, callback, request.state);
  const response = await oauth.authorizationCodeGrantRequest(as, tc.client, tc.auth, params, tc.redirectUri, request.verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, tc.client, response, { expectedNonce: request.nonce, requireIdToken: true });
  return { tokens, consentShown, callback, request };
}

/** The fields of the form `formId` in a page (name → value), hidden ones included. */
export function formFields(html: string, formId: string): Record<string, string> {
  const part = html.slice(html.indexOf(`id="${formId}"`));
  return Object.fromEntries([...part.slice(0, part.indexOf("</form>")).matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/**
 * At /device, types `userCode` and confirms it as the page asks (JS off); the step the browser
 * reaches after the confirmation (the consent page, or the re-authentication page).
 */
export async function confirmDeviceCode(server: ProviderServer, jar: CookieJar, userCode: string): Promise<Step> {
  const entry = await follow(server, jar, "/device");
  const typed = await call(server.url, jar, "/device", { body: { ...formFields(entry.html ?? "", "device-code-form"), user_code: userCode } });
  const confirmHtml = await typed.text();
  const confirmed = await call(server.url, jar, "/device", { body: formFields(confirmHtml, "device-confirm-form") });
  await confirmed.body?.cancel();
  if (confirmed.status !== 303) throw new Error(`the device confirmation answered ${confirmed.status}`);
  return follow(server, jar, new URL(confirmed.headers.get("location")!, server.url));
}
