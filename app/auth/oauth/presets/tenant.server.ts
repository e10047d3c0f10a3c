// The presets whose issuer is the operator's own tenant (AUTH_<PRESET>_ISSUER): Auth0, Amazon
// Cognito, Keycloak and Okta are OpenID providers found by discovery at that issuer, with the
// standard claims; only what differs between them is here.
import type { PresetClientConfig } from "../../core/config.server";
import { nonEmptyString, standardProfile, type OAuthProviderDefinition } from "./definition";

type TenantPreset = { id: string; name: string };

function tenantProvider({ id, name }: TenantPreset, client: PresetClientConfig, extra: Partial<OAuthProviderDefinition> = {}): OAuthProviderDefinition {
  if (!client.issuer) throw new Error(`${id} needs its issuer (AUTH_${id.toUpperCase()}_ISSUER)`);
  return {
    id,
    name,
    type: "oidc",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    issuer: client.issuer,
    scope: "openid profile email",
    ...extra,
  };
}

/** Auth0: its issuer always ends with "/", however the tenant's address was written. */
export function auth0Provider(client: PresetClientConfig): OAuthProviderDefinition {
  const base = (client.issuer ?? "").replace(/\/+$/, "");
  return tenantProvider({ id: "auth0", name: "Auth0" }, { ...client, issuer: base }, { discoveryIssuer: `${base}/` });
}

/** Amazon Cognito (a user pool's issuer): `email_verified` may come as a string, and `name` is often unset. */
export function cognitoProvider(client: PresetClientConfig): OAuthProviderDefinition {
  return tenantProvider({ id: "cognito", name: "Cognito" }, client, {
    profile: (claims) => {
      const p = standardProfile(claims);
      return { ...p, name: p.name ?? nonEmptyString(claims["cognito:username"]) };
    },
  });
}

/** Keycloak: a realm's issuer, `<server>/realms/<realm>`. */
export function keycloakProvider(client: PresetClientConfig): OAuthProviderDefinition {
  return tenantProvider({ id: "keycloak", name: "Keycloak" }, client);
}

/** Okta: the org's or a custom authorization server's issuer. */
export function oktaProvider(client: PresetClientConfig): OAuthProviderDefinition {
  return tenantProvider({ id: "okta", name: "Okta" }, client);
}
