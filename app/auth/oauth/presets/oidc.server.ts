// Generic OpenID Connect providers, found by discovery: `oidc` from AUTH_OIDC_ISSUER/ID/SECRET/NAME
// (in development without those variables, the bundled dev IdP), and one per
// AUTH_OIDC_<NAME>_ISSUER/_ID/_SECRET/_LABEL, with id `<name>` in lower case.
import type { AuthConfig, OidcProviderConfig } from "../../core/config.server";
import type { OAuthProviderDefinition } from "./definition";

export function oidcProvider(oidc: NonNullable<AuthConfig["oidc"]>): OAuthProviderDefinition {
  return {
    id: "oidc",
    name: oidc.name,
    type: "oidc",
    clientId: oidc.clientId,
    clientSecret: oidc.clientSecret,
    issuer: oidc.issuer,
    scope: "openid profile email",
    federatedSignOut: oidc.federatedSignOut ?? false,
  };
}

export function namedOidcProvider(p: OidcProviderConfig): OAuthProviderDefinition {
  return {
    id: p.id,
    name: p.label,
    type: "oidc",
    clientId: p.clientId,
    clientSecret: p.clientSecret,
    issuer: p.issuer,
    scope: "openid profile email",
  };
}
