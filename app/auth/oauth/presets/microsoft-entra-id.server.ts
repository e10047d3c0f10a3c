// Microsoft Entra ID, multi-tenant ("common"): the discovery document and every ID token name the
// signing tenant in `iss` (`…/{tenantid}/v2.0`), so the expected issuer is built from the token's
// `tid`. Entra does not verify the `email` claim, so it never counts as verified here.
import type { OAuthClientConfig } from "../../core/config.server";
import { nonEmptyString, standardProfile, type OAuthProviderDefinition } from "./definition";

const AUTHORITY = "https://login.microsoftonline.com";

/** `authority`: Microsoft's login host; tests point it at a local server shaped like it. */
export function microsoftEntraIdProvider(client: OAuthClientConfig, authority = AUTHORITY): OAuthProviderDefinition {
  return {
    id: "microsoft-entra-id",
    name: "Microsoft Entra ID",
    type: "oidc",
    ...client,
    issuer: `${authority}/common/v2.0`,
    discoveryIssuer: `${authority}/{tenantid}/v2.0`,
    idTokenIssuer: (claims) => `${authority}/${nonEmptyString(claims.tid) ?? "invalid-tenant"}/v2.0`,
    scope: "openid profile email offline_access",
    profile: (claims) => ({ ...standardProfile(claims), emailVerified: false }),
  };
}
