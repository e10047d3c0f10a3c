// Generic OpenID Connect provider (id `oidc`) from AUTH_OIDC_ISSUER/ID/SECRET/NAME, found by
// discovery. In development without those variables this is the bundled dev IdP.
import type { AuthConfig } from "../../core/config.server";
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
