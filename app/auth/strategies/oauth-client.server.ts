// A provider definition turned into what oauth4webapi works with: the authorization server's
// metadata (discovered or explicit), the client, and how the client authenticates.
import * as oauth from "oauth4webapi";
import { OAUTH_CLOCK_TOLERANCE } from "../config.server";
import type { Claims, OAuthProviderDefinition } from "../providers/definition";
import { discover, OutboundError, type OutboundBudget } from "./oauth-http.server";

export type ProviderClient = {
  definition: OAuthProviderDefinition;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  /** How long each call to this provider may take (requestOptions(url, pc.budget)). */
  budget: OutboundBudget;
};

// oauth4webapi's hook for an issuer that depends on the token (Auth.js uses it for Entra ID too).
const expectedIssuerHook = (oauth as unknown as { _expectedIssuer: symbol })._expectedIssuer;

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
  if (definition.idTokenIssuer && expectedIssuerHook) {
    const issuerOf = definition.idTokenIssuer;
    (as as unknown as Record<symbol, unknown>)[expectedIssuerHook] = (result: { claims: Claims }) => issuerOf(result.claims);
  }
  const client: oauth.Client = { client_id: definition.clientId, [oauth.clockTolerance]: OAUTH_CLOCK_TOLERANCE };
  const auth =
    definition.clientAuth === "client_secret_post"
      ? oauth.ClientSecretPost(definition.clientSecret)
      : oauth.ClientSecretBasic(definition.clientSecret);
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

/** The issuer an ID token from this provider must name. */
export function expectedIdTokenIssuer(pc: ProviderClient, claims: Claims): string {
  return pc.definition.idTokenIssuer ? pc.definition.idTokenIssuer(claims) : pc.as.issuer;
}
