// Sign-in through an organization's OpenID Connect connection (ADR 151, 164), on the same
// protocol code as the configured providers (app/auth/oauth: oauth4webapi, discovery, the check
// cookies, the ID token's signature and claims, userinfo):
//
//   GET /sso/oidc/<id>/signin?callbackUrl=…  → the IdP's authorization endpoint (code, PKCE S256,
//                                              state, nonce); state, verifier and nonce kept in
//                                              the sealed check cookies with the signed-in user
//   GET /sso/oidc/<id>/callback              → state from those cookies, code exchange, ID token
//                                              (iss = the pinned issuer, aud, azp, nonce, exp,
//                                              signature), userinfo, then who this is
//                                              (organizations/enterprise-provision.server.ts)
//
// The issuer is pinned: discovery must name exactly the configured issuer, and so must every ID
// token. Every failure ends as the one error code `Callback` (the sign-in page's generic error)
// with the reason in the log, except an existing account its owner has not linked yet
// (OAuthAccountNotLinked, as for SAML).
import * as oauth from "oauth4webapi";
import { isDatabaseUnavailable } from "../../db/unavailable.server";
import { validateCallbackUrl } from "../core/callback-url.server";
import { AuthError } from "../core/errors";
import { log } from "../core/log.server";
import type { AuthRequest } from "../core/request.server";
import { redirectResponse } from "../core/respond.server";
import { getSession } from "../core/session.server";
import { consumeFlow, storeFlow } from "../oauth/checks.server";
import { processTokenResponse, providerClient, type ProviderClient } from "../oauth/client.server";
import { classify, outbound, outboundBudget, requestOptions } from "../oauth/http.server";
import { standardProfile, type Claims, type OAuthProfile, type OAuthProviderDefinition } from "../oauth/presets/definition";
import { entraProfile } from "../oauth/presets/microsoft-entra-id.server";
import { mapProfile, oidcClaims } from "../oauth/strategy.server";
import { provisionPerson, type IdentityStore } from "../organizations/enterprise-provision.server";
import { completeSignIn, failureResponse } from "../signin/flow.server";
import { endpointsRefusal, findOidcConnection, urlRefusal, type OidcConnectionRow } from "./connections.server";
import { OIDC_CONNECTION_METHOD, oidcCallbackPath, oidcCredentialRef, oidcFlowKey } from "./paths";

/** The scopes asked of every connection's IdP: an ID token, the address and the name. */
const SCOPE = "openid email profile";

const oidcIdentities: IdentityStore = {
  via: "oidc",
  find: (client, connectionId, subject) => client.oidcIdentity.findUnique({ where: { connectionId_subject: { connectionId, subject } }, select: { id: true, userId: true } }),
  create: (client, data) => client.oidcIdentity.create({ data, select: { id: true } }),
  credentialRef: oidcCredentialRef,
};

/** The connection, when organizations are on (every /sso URL is 404 otherwise). */
export async function oidcConnectionFor(ar: AuthRequest, id: string | undefined): Promise<OidcConnectionRow | null> {
  if (!ar.config.organizations || !id || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return null;
  return findOidcConnection(id, ar.config);
}

/**
 * The provider client of the connection, its issuer and the endpoints discovery names checked
 * first (ADR 164 amended): a connection from the organization page reaches public https hosts only.
 */
async function checkedClient(ar: AuthRequest, connection: OidcConnectionRow): Promise<ProviderClient> {
  const issuerRefused = await urlRefusal(connection.issuer, connection.allowPrivateAddress, ar.config);
  if (issuerRefused) throw new Refused(`issuer ${issuerRefused}`);
  const pc = await providerClient(definitionOf(connection), outboundBudget(ar.config));
  const endpoints = await endpointsRefusal(pc.as, connection.allowPrivateAddress, ar.config);
  if (endpoints) throw new Refused(`discovery names an endpoint the server may not call: ${endpoints}`);
  return pc;
}

/** The connection as the oauth code reads a provider: its own issuer, discovered and pinned. */
function definitionOf(connection: OidcConnectionRow): OAuthProviderDefinition {
  return {
    id: oidcFlowKey(connection.id),
    name: connection.organizationName,
    type: "oidc",
    clientId: connection.clientId,
    clientSecret: connection.clientSecret,
    issuer: connection.issuer,
    scope: SCOPE,
  };
}

const redirectUri = (ar: AuthRequest, connection: OidcConnectionRow) => `${ar.origin}${oidcCallbackPath(connection.id)}`;

/** A refusal: the reason to the log, the visitor to the sign-in page's generic error. */
class Refused extends Error {}

function refusal(ar: AuthRequest, connection: OidcConnectionRow, error: unknown, setCookies: string[]): Response {
  // The database down is the outage page's, as everywhere; a not-linked account has its own words.
  if (isDatabaseUnavailable(error) || (error instanceof AuthError && error.code === "OAuthAccountNotLinked")) return failureResponse(ar, error, false, setCookies);
  const reason = error instanceof Refused ? error.message : error instanceof AuthError ? error.message : classify("token", error).message;
  log("warn", "oidc-connection-refused", { connectionId: connection.id, reason });
  return failureResponse(ar, new AuthError("Callback", { log: "OpenID Connect connection: sign-in refused" }), false, setCookies);
}

/** GET /sso/oidc/<id>/signin: off to the organization's IdP, the flow's checks in the cookies. */
export async function startOidcSignIn(ar: AuthRequest, connection: OidcConnectionRow): Promise<Response> {
  const callbackUrl = validateCallbackUrl(ar.url.searchParams.get("callbackUrl") ?? "/", ar.origin) ?? `${ar.origin}/`;
  try {
    const pc = await checkedClient(ar, connection);
    const { session } = await getSession(ar, { roll: false });
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(pc.as.authorization_endpoint!);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", connection.clientId);
    url.searchParams.set("redirect_uri", redirectUri(ar, connection));
    url.searchParams.set("scope", SCOPE);
    url.searchParams.set("state", state);
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set("code_challenge_method", "S256");
    url.searchParams.set("nonce", nonce);
    const loginHint = ar.url.searchParams.get("login_hint");
    if (loginHint && loginHint.length <= 320) url.searchParams.set("login_hint", loginHint);
    const setCookies = await storeFlow(
      ar,
      { provider: oidcFlowKey(connection.id), state, codeVerifier, nonce, callbackUrl, maxAge: null, signedIn: session !== null, startedBy: session?.userId ?? null },
      { formPost: false },
    );
    return redirectResponse(url.href, { setCookies });
  } catch (error) {
    return refusal(ar, connection, error, []);
  }
}

/**
 * Entra ID lets a tenant put any address in `email`: a token that names an Entra tenant (`tid`,
 * or the issuer is Microsoft's) is read as the Entra preset reads it, the address verified only by
 * `xms_edov`. Any other IdP: `email_verified`. Reading a token as Entra's only ever makes it stricter.
 */
function profileOf(connection: OidcConnectionRow, claims: Claims): OAuthProfile {
  const entra = typeof claims.tid === "string" || new URL(connection.issuer).hostname === "login.microsoftonline.com";
  return mapProfile(() => (entra ? entraProfile(claims) : standardProfile(claims)));
}

async function exchange(ar: AuthRequest, connection: OidcConnectionRow, pc: ProviderClient, validated: URLSearchParams, codeVerifier: string, nonce: string) {
  return outbound("token", async () => {
    const response = await oauth.authorizationCodeGrantRequest(pc.as, pc.client, pc.auth, validated, redirectUri(ar, connection), codeVerifier, requestOptions(pc.as.token_endpoint, pc.budget));
    return processTokenResponse(pc, response, { grant: "authorization_code", expectedNonce: nonce, requireIdToken: true });
  });
}

/** GET /sso/oidc/<id>/callback: the IdP's answer, checked step by step; a session or the generic error. */
export async function finishOidcSignIn(ar: AuthRequest, connection: OidcConnectionRow): Promise<Response> {
  const params = new URLSearchParams(ar.url.search);
  // The flow's cookies are rewritten (this flow taken out) on every outcome.
  const { result, setCookies } = await consumeFlow(ar, oidcFlowKey(connection.id), params.get("state"), true);
  try {
    if (!result.ok) throw new Refused(`check cookies: ${result.reason}`);
    const flow = result.flow;
    const pc = await checkedClient(ar, connection);
    let validated: URLSearchParams;
    try {
      validated = oauth.validateAuthResponse(pc.as, pc.client, params, flow.state);
    } catch (error) {
      throw new Refused(error instanceof oauth.AuthorizationResponseError ? `IdP answered error=${error.error}` : `authorization response rejected: ${(error as Error).message}`);
    }
    const tokenResponse = await exchange(ar, connection, pc, validated, flow.codeVerifier!, flow.nonce!);
    const profile = profileOf(connection, await oidcClaims(pc, tokenResponse));
    // Only an address the IdP says it verified names the person's account (or creates one).
    if (!profile.email || !profile.emailVerified) throw new Refused("no verified address in the ID token or userinfo");
    const provisioned = await provisionPerson(oidcIdentities, connection, { subject: profile.id, email: profile.email, name: profile.name }, flow.startedBy);
    if (!provisioned.ok) {
      if (provisioned.reason === "not-linked") throw new AuthError("OAuthAccountNotLinked", { log: "OpenID Connect connection: an account with this address exists; its owner links it by signing in first" });
      throw new Refused(`provisioning: ${provisioned.reason}`);
    }
    return await completeSignIn({ ar, json: false, callbackUrl: flow.callbackUrl ?? `${ar.origin}/`, setCookies, providerType: "oidc" }, OIDC_CONNECTION_METHOD, provisioned.result);
  } catch (error) {
    return refusal(ar, connection, error, setCookies);
  }
}
