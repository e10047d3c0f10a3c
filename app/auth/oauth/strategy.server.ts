// OAuth 2.0 / OpenID Connect sign-in as a remix-auth Strategy, built on oauth4webapi and jose
// (docs/decisions/010-oauth-library.md). One instance per configured provider; everything that
// differs between providers is data in app/auth/oauth/presets/.
//
//   POST /auth/signin/<id>     → authorize(): check values into sealed cookies, throw a redirect
//                                to the provider (response_type=code, PKCE S256, state, nonce).
//   GET|POST /auth/callback/<id> → callback(): the flow's cookies → authorization response
//                                (state, RFC 9207 iss, error) → code exchange → ID token (JWKS
//                                signature, iss/aud/azp/exp/iat/nonce) → userinfo (same sub) →
//                                verify(), which decides who this is (link.server.ts).
//
// Every failure becomes an AuthError with an error code (docs/decisions/014-oauth-errors.md);
// the cause goes to the server log only.
import * as oauth from "oauth4webapi";
import { Strategy } from "remix-auth/strategy";
import { recordEvent } from "../accounts/audit.server";
import { OAUTH_CLOCK_TOLERANCE, type AuthConfig } from "../core/config.server";
import { normalizeEmailAddress } from "../core/email-address";
import { AuthError } from "../core/errors";
import { tokenSetFrom, type TokenSet } from "./tokens.server";
import { standardProfile, type Claims, type OAuthProfile, type OAuthProviderDefinition } from "./presets/definition";
import { resolveCallbackUrl } from "../core/callback-url.server";
import { sessionCookieDigest } from "../core/session.server";
import { authBaseUrl, authRequest, clientAddress, type AuthRequest } from "../core/request.server";
import { consumeFlow, storeFlow, type Flow, type ReauthFlow } from "./checks.server";
import { expectedIdTokenIssuer, providerClient, processTokenResponse, type ProviderClient } from "./client.server";
import { fetchJson, OutboundError, outbound, outboundBudget, requestOptions, verifyJwtSignature } from "./http.server";

export type OAuthVerifyParams = {
  request: Request;
  config: AuthConfig;
  provider: OAuthProviderDefinition;
  profile: OAuthProfile;
  tokens: TokenSet;
  /** The flow this answer belongs to (a re-authentication's is marked: ADR 080). */
  flow: Flow;
  /** The ID token's auth_time (seconds), when the provider sent one. */
  authTime: number | null;
};

/**
 * The parameters a client may add to the authorization request through the sign-in URL's query
 * (Auth.js's third signIn() argument), each with the values it accepts: how the provider should
 * ask the person, never what is asked for (scope, claims, resource) or where the answer goes.
 * Anything else in the query never reaches the provider (docs/decisions/027-oauth-authorization-parameters.md).
 */
const CLIENT_AUTHORIZATION_PARAMS = new Map<string, (value: string, d: OAuthProviderDefinition) => boolean>([
  ["login_hint", () => true],
  ["prompt", () => true],
  ["ui_locales", () => true],
  ["acr_values", () => true],
  ["display", () => true],
  // OpenID Connect only: the ID token's auth_time is checked against it, which needs an ID token.
  ["max_age", (v, d) => d.type === "oidc" && /^\d{1,9}$/.test(v)],
  // form_post changes how the answer arrives (a cross-site POST), not where; ADR 016.
  ["response_mode", (v) => v === "query" || v === "form_post"],
]);

export class OAuthStrategy<User> extends Strategy<User, OAuthVerifyParams> {
  name: string;

  constructor(
    private readonly definition: OAuthProviderDefinition,
    private readonly config: AuthConfig,
    verify: Strategy.VerifyFunction<User, OAuthVerifyParams>,
  ) {
    super(verify);
    this.name = definition.id;
  }

  async authenticate(request: Request): Promise<User> {
    const ar = authRequest(request, this.config);
    const leg = ar.url.pathname === `${this.config.basePath}/callback/${this.definition.id}` ? "callback" : "signIn";
    try {
      if (leg === "signIn") throw await this.authorize(ar, request);
      return await this.callback(ar, request);
    } catch (thrown) {
      if (thrown instanceof Response) throw thrown;
      const error = toAuthError(leg, thrown);
      await recordEvent("signin-failed", {
        ip: clientAddress(ar),
        detail: { provider: this.definition.id, code: error.code, reason: error.message },
      });
      throw error;
    }
  }

  private redirectUri(ar: AuthRequest) {
    return `${authBaseUrl(ar)}/callback/${this.definition.id}`;
  }

  /** Leg 1: a redirect to the provider's authorization endpoint, with the check cookies. */
  private async authorize(ar: AuthRequest, request: Request): Promise<Response> {
    // The same callback URL the sign-in flow resolved (body, then query, then cookie).
    const form = Object.fromEntries(new URLSearchParams((await request.text()) || ""));
    const { url: callbackUrl } = resolveCallbackUrl(ar, form);
    const asked = new URLSearchParams();
    for (const [name, value] of ar.url.searchParams) {
      if (CLIENT_AUTHORIZATION_PARAMS.get(name)?.(value, this.definition)) asked.set(name, value);
    }
    return this.authorizationRedirect(ar, callbackUrl, asked, null);
  }

  /**
   * A re-authentication of the signed-in user (/auth/reauth, ADR 080), OpenID Connect only: the
   * provider must ask the person again (prompt=login) and say when it did (max_age=0, so the ID
   * token's auth_time is required and checked); the flow remembers who asked and when.
   */
  async startReauthentication(ar: AuthRequest, callbackUrl: string, reauth: ReauthFlow): Promise<Response> {
    if (this.definition.type !== "oidc") throw new AuthError("OAuthSignin", { log: "re-authentication needs an OpenID provider" });
    try {
      return await this.authorizationRedirect(ar, callbackUrl, new URLSearchParams({ prompt: "login", max_age: "0" }), reauth);
    } catch (error) {
      throw toAuthError("signIn", error);
    }
  }

  private async authorizationRedirect(ar: AuthRequest, callbackUrl: string, asked: URLSearchParams, reauth: ReauthFlow | null): Promise<Response> {
    const d = this.definition;
    const pc = await providerClient(d, outboundBudget(this.config));
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const nonce = d.type === "oidc" ? oauth.generateRandomNonce() : null;

    const url = new URL(pc.as.authorization_endpoint!);
    const params = url.searchParams;
    params.set("response_type", "code");
    params.set("client_id", d.clientId);
    params.set("redirect_uri", this.redirectUri(ar));
    if (!params.has("scope")) params.set("scope", d.scope);
    for (const [k, v] of Object.entries(d.authorizationParams ?? {})) params.set(k, v);
    if (d.responseMode) params.set("response_mode", d.responseMode);
    for (const [name, value] of asked) params.set(name, value);
    // An ID token is required from an OIDC provider, whatever scope the client asked for.
    const scopes = (params.get("scope") ?? "").split(" ").filter(Boolean);
    if (d.type === "oidc" && !scopes.includes("openid")) params.set("scope", ["openid", ...scopes].join(" "));
    params.set("state", state);
    params.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
    params.set("code_challenge_method", "S256");
    if (nonce) params.set("nonce", nonce);

    const maxAge = params.has("max_age") && d.type === "oidc" ? Number(params.get("max_age")) : null;
    const setCookies = await storeFlow(
      ar,
      { provider: d.id, state, codeVerifier, nonce, callbackUrl, maxAge, reauth, signedIn: sessionCookieDigest(ar) !== null },
      { formPost: params.get("response_mode") === "form_post" },
    );
    const headers = new Headers({ Location: url.href });
    for (const c of setCookies) headers.append("Set-Cookie", c);
    return new Response(null, { status: 302, headers });
  }

  /** Leg 2: the provider's answer, checked step by step; resolves with verify()'s user. */
  private async callback(ar: AuthRequest, request: Request): Promise<User> {
    const d = this.definition;
    const params =
      request.method === "POST" ? new URLSearchParams((await request.text()) || "") : new URLSearchParams(ar.url.search);

    // The cookies are cleared by the provider's callback handler (providers.server.ts)
    // on every outcome; here they only have to match.
    const { result } = await consumeFlow(ar, d.id, params.get("state"), d.type === "oidc");
    if (!result.ok) throw new AuthError("OAuthCallback", { log: `check cookies: ${result.reason}` });
    const flow = result.flow;

    const pc = await providerClient(d, outboundBudget(this.config));
    let validated: URLSearchParams;
    try {
      validated = oauth.validateAuthResponse(pc.as, pc.client, params, flow.state);
    } catch (error) {
      if (error instanceof oauth.AuthorizationResponseError) {
        // access_denied is the visitor's Cancel at the provider: the sign-in page says so and offers the other ways.
        if (error.error === "access_denied") {
          throw new AuthError("OAuthCancelled", { log: "provider answered error=access_denied", cause: error, params: { provider: d.id } });
        }
        throw new AuthError("OAuthCallback", { log: `provider answered error=${error.error}`, cause: error });
      }
      throw new AuthError("OAuthCallback", { log: `authorization response rejected: ${(error as Error).message}`, cause: error });
    }

    const tokenResponse = await outbound("token", async () => {
      const response = await oauth.authorizationCodeGrantRequest(
        pc.as,
        pc.client,
        pc.auth,
        validated,
        this.redirectUri(ar),
        flow.codeVerifier!,
        requestOptions(pc.as.token_endpoint, pc.budget, d.apiHeaders),
      );
      return processTokenResponse(pc, response, {
        grant: "authorization_code",
        expectedNonce: flow.nonce ?? oauth.expectNoNonce,
        requireIdToken: d.type === "oidc",
        ...(flow.maxAge !== null ? { maxAge: flow.maxAge } : {}),
      });
    });
    const tokens = tokenSetFrom(tokenResponse, params.get("session_state"));

    const profile = d.type === "oidc" ? await this.oidcProfile(pc, tokenResponse, params) : await this.oauthProfile(pc, tokens.accessToken, params);
    const authTime = d.type === "oidc" ? oauth.getValidatedIdTokenClaims(tokenResponse)?.auth_time : undefined;
    return this.verify({ request, config: this.config, provider: d, profile, tokens, flow, authTime: typeof authTime === "number" ? authTime : null });
  }

  /** OIDC: the checked claims (oidcClaims below) as the preset maps them. */
  private async oidcProfile(pc: ProviderClient, tokenResponse: oauth.TokenEndpointResponse, answer: URLSearchParams): Promise<OAuthProfile> {
    const merged = await oidcClaims(pc, tokenResponse);
    return mapProfile(() => (pc.definition.profile ?? standardProfile)(merged, answer));
  }

  /** Plain OAuth 2.0: the preset's profile fetcher, or a standard userinfo endpoint. */
  private async oauthProfile(pc: ProviderClient, accessToken: string, answer: URLSearchParams): Promise<OAuthProfile> {
    const d = pc.definition;
    if (d.fetchProfile) {
      const fetcher = (url: string, token: string, headers?: Record<string, string>) =>
        fetchJson("profile", url, pc.budget, { headers: { Accept: "application/json", ...d.apiHeaders, ...headers, Authorization: `Bearer ${token}` } });
      let raw: OAuthProfile;
      try {
        raw = await d.fetchProfile(fetcher, accessToken);
      } catch (error) {
        if (error instanceof OutboundError) throw error;
        throw new AuthError("OAuthCallback", { log: "profile could not be read", cause: error });
      }
      return mapProfile(() => raw);
    }
    if (!pc.as.userinfo_endpoint) throw new AuthError("OAuthCallback", { log: `provider ${d.id} has neither a profile fetcher nor userinfo` });
    const userinfo = await outbound("userinfo", async () =>
      oauth.processUserInfoResponse(
        pc.as,
        pc.client,
        oauth.skipSubjectCheck,
        await oauth.userInfoRequest(pc.as, pc.client, accessToken, requestOptions(pc.as.userinfo_endpoint, pc.budget, d.apiHeaders)),
      ),
    );
    return mapProfile(() => (d.profile ?? standardProfile)(userinfo as Claims, answer));
  }
}

/**
 * OIDC: processTokenResponse has checked the ID token's claims (iss, aud, azp, exp, nonce,
 * 10 s tolerance); its signature is checked here against the provider's JWKS, as is an `iat` in the
 * future. Then userinfo, whose `sub` must be the ID token's. Returns the ID token's claims with
 * userinfo's merged in (`sub` always the ID token's). Also the organizations' OpenID Connect
 * connections' check (app/auth/oidc-connections, ADR 151).
 */
export async function oidcClaims(pc: ProviderClient, tokenResponse: oauth.TokenEndpointResponse): Promise<Claims> {
  const claims = oauth.getValidatedIdTokenClaims(tokenResponse)!;
  if (!pc.as.jwks_uri) throw new AuthError("OAuthCallback", { log: "provider metadata has no jwks_uri" });
  try {
    await verifyJwtSignature(pc.as.jwks_uri, tokenResponse.id_token!, {
      issuer: expectedIdTokenIssuer(pc, claims as Claims),
      audience: pc.definition.clientId,
      algorithms: pc.as.id_token_signing_alg_values_supported,
    }, pc.budget);
  } catch (error) {
    if (error instanceof OutboundError) throw error;
    throw new AuthError("OAuthCallback", { log: `id_token rejected: ${(error as Error).message}`, cause: error });
  }
  const now = Math.floor(Date.now() / 1000);
  if (claims.iat > now + OAUTH_CLOCK_TOLERANCE) {
    throw new AuthError("OAuthCallback", { log: `id_token iat is ${claims.iat - now} s in the future` });
  }

  let merged: Claims = { ...claims };
  if (pc.as.userinfo_endpoint) {
    const userinfo = await outbound("userinfo", async () =>
      oauth.processUserInfoResponse(
        pc.as,
        pc.client,
        claims.sub,
        await oauth.userInfoRequest(pc.as, pc.client, tokenResponse.access_token, requestOptions(pc.as.userinfo_endpoint, pc.budget, pc.definition.apiHeaders)),
      ),
    );
    merged = { ...merged, ...userinfo, sub: claims.sub };
  }
  return merged;
}

export function mapProfile(build: () => OAuthProfile): OAuthProfile {
  let profile: OAuthProfile;
  try {
    profile = build();
  } catch (error) {
    throw new AuthError("OAuthCallback", { log: "profile could not be mapped", cause: error });
  }
  if (!profile.id || profile.id.length > 255) throw new AuthError("OAuthCallback", { log: "profile id missing or too long" });
  if (profile.email) {
    // The one address rule (email-address.ts). The provider vouched for the string it sent, so
    // normalisation may only lower-case it: an address NFKC would turn into another one ("ｅｖｅ@…"
    // → "eve@…") is not the one the provider verified. Otherwise the sign-in continues without one.
    const check = normalizeEmailAddress(profile.email);
    const usable = check.ok && check.address === profile.email.trim().toLowerCase();
    profile = usable ? { ...profile, email: check.address } : { ...profile, email: null, emailVerified: false };
  }
  return profile;
}

/**
 * Outbound failures and anything unexpected, by leg: the sign-in leg reports OAuthSignin, the
 * callback OAuthCallback. Codes chosen earlier (AccessDenied, OAuthAccountNotLinked, …) stand.
 */
function toAuthError(leg: "signIn" | "callback", error: unknown): AuthError {
  if (error instanceof AuthError) return error;
  const code = leg === "signIn" ? "OAuthSignin" : "OAuthCallback";
  if (error instanceof OutboundError) return new AuthError(code, { log: `${error.step} ${error.failure}: ${error.message}`, cause: error });
  return new AuthError(code, { log: error instanceof Error ? error.message : String(error), cause: error });
}
