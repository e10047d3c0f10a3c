// A provider definition turned into what oauth4webapi works with: the authorization server's
// metadata (discovered or explicit), the client, and how the client authenticates.
import { decodeJwt } from "jose";
import * as oauth from "oauth4webapi";
import { OAUTH_CLOCK_TOLERANCE } from "../core/config.server";
import type { Claims, OAuthProviderDefinition } from "./presets/definition";
import { discover, OutboundError, type OutboundBudget } from "./http.server";

export type ProviderClient = {
  definition: OAuthProviderDefinition;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  /** How long each call to this provider may take (requestOptions(url, pc.budget)). */
  budget: OutboundBudget;
};

/** Placeholder issuer for plain OAuth 2.0 providers: they have none, and never send `iss`. */
const NO_ISSUER = "urn:vestibule:oauth2-provider-without-issuer";

export async function providerClient(definition: OAuthProviderDefinition, budget: OutboundBudget): Promise<ProviderClient> {
  let as: oauth.AuthorizationServer;
  if (definition.issuer) {
    const discovered = await discover(definition.issuer, definition.discoveryIssuer ?? definition.issuer, budget);
    as = { ...discovered, ...explicitEndpoints(definition) };
  } else {
    as = { issuer: NO_ISSUER, ...explicitEndpoints(definition) };
  }
  if (!as.authorization_endpoint || !as.token_endpoint) {
    throw new OutboundError("discovery", "protocol", `provider ${definition.id} has no authorization or token endpoint`);
  }
  const client: oauth.Client = { client_id: definition.clientId, [oauth.clockTolerance]: OAUTH_CLOCK_TOLERANCE };
  const secret = definition.makeClientSecret ? await definition.makeClientSecret() : definition.clientSecret;
  const auth = definition.clientAuth === "client_secret_post" ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret);
  return { definition, as, client, auth, budget };
}

function explicitEndpoints(d: OAuthProviderDefinition): Partial<oauth.AuthorizationServer> {
  const e = d.endpoints ?? {};
  const out: Record<string, string> = {};
  if (e.authorization) out.authorization_endpoint = e.authorization;
  if (e.token) out.token_endpoint = e.token;
  if (e.userinfo) out.userinfo_endpoint = e.userinfo;
  if (e.revocation) out.revocation_endpoint = e.revocation;
  if (e.introspection) out.introspection_endpoint = e.introspection;
  if (e.endSession) out.end_session_endpoint = e.endSession;
  if (e.jwks) out.jwks_uri = e.jwks;
  return out;
}

/**
 * The authorization server a token endpoint `response` is checked against. oauth4webapi compares
 * an ID token's `iss` with `as.issuer`, which for most providers is the discovered issuer. Where
 * the issuer depends on the token (Entra ID's multi-tenant endpoint: the signing tenant, named by
 * `tid`), it is the one the definition derives from the ID token's own claims, read from a copy
 * of the response without verifying anything: they only choose what to expect. oauth4webapi then
 * checks `iss` against it, and the signature over those claims is checked against the JWKS.
 */
async function tokenResponseServer(pc: ProviderClient, response: Response): Promise<oauth.AuthorizationServer> {
  const issuerOf = pc.definition.idTokenIssuer;
  if (!issuerOf) return pc.as;
  let claims: Claims = {};
  try {
    const body = (await response.clone().json()) as { id_token?: unknown };
    if (typeof body.id_token === "string") claims = decodeJwt(body.id_token);
  } catch {
    // Not JSON or not a JWT: oauth4webapi refuses the response itself.
  }
  return { ...pc.as, issuer: issuerOf(claims) };
}

/**
 * A successful token response with the definition's conformTokenResponse applied to its JSON
 * body (Twitch's `scope` array), as a fresh Response oauth4webapi then checks like any other.
 */
async function conformed(definition: OAuthProviderDefinition, response: Response): Promise<Response> {
  const conform = definition.conformTokenResponse;
  if (!conform || !response.ok) return response;
  let body: unknown;
  try {
    body = await response.clone().json();
  } catch {
    return response;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return response;
  return new Response(JSON.stringify(conform(body as Record<string, unknown>)), { status: response.status, statusText: response.statusText, headers: response.headers });
}

export type TokenGrant =
  | ({ grant: "authorization_code" } & oauth.ProcessAuthorizationCodeResponseOptions)
  | { grant: "refresh_token" };

/**
 * Checks a token endpoint response: oauth4webapi's checks against the issuer this response's ID
 * token must name (above), then OpenID Connect Core §3.1.3.7's rule that oauth4webapi applies
 * only when `aud` lists several audiences: an `azp`, when present, must be our client id,
 * whatever `aud` holds.
 */
export async function processTokenResponse(pc: ProviderClient, answer: Response, grant: TokenGrant): Promise<oauth.TokenEndpointResponse> {
  const response = await conformed(pc.definition, answer);
  const as = await tokenResponseServer(pc, response);
  const result =
    grant.grant === "authorization_code"
      ? await oauth.processAuthorizationCodeResponse(as, pc.client, response, grant)
      : await oauth.processRefreshTokenResponse(as, pc.client, response);
  const claims = oauth.getValidatedIdTokenClaims(result);
  if (claims && claims.azp !== undefined && claims.azp !== pc.client.client_id) {
    throw new Error('unexpected ID Token "azp" (authorized party) claim value: not this client');
  }
  return result;
}

/** The issuer an ID token from this provider must name. */
export function expectedIdTokenIssuer(pc: ProviderClient, claims: Claims): string {
  return pc.definition.idTokenIssuer ? pc.definition.idTokenIssuer(claims) : pc.as.issuer;
}
