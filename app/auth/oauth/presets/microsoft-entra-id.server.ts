// Microsoft Entra ID. Without AUTH_MICROSOFT_ENTRA_ID_ISSUER: multi-tenant ("common"), where the
// discovery document and every ID token name the signing tenant in `iss` (`…/{tenantid}/v2.0`),
// so the expected issuer is built from the token's `tid`. With it: that one tenant's issuer
// (`https://login.microsoftonline.com/<tenant id>/v2.0`). Entra lets a tenant put any address in
// `email`: it counts as verified only when the optional `xms_edov` claim says the address's domain
// is verified by its owner.
import type { PresetClientConfig } from "../../core/config.server";
import { nonEmptyString, standardProfile, type Claims, type OAuthProviderDefinition } from "./definition";

const AUTHORITY = "https://login.microsoftonline.com";

/** `xms_edov` true (a boolean, or as a string or 1) or the address is not verified. */
export function entraProfile(claims: Claims) {
  const edov = claims.xms_edov;
  return { ...standardProfile(claims), emailVerified: edov === true || edov === "true" || edov === 1 || edov === "1" };
}

/** `authority`: Microsoft's login host; tests point it at a local server shaped like it. */
export function microsoftEntraIdProvider(client: PresetClientConfig, authority = AUTHORITY): OAuthProviderDefinition {
  const base = {
    id: "microsoft-entra-id",
    name: "Microsoft Entra ID",
    type: "oidc" as const,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    scope: "openid profile email offline_access",
    profile: entraProfile,
  };
  if (client.issuer) return { ...base, issuer: client.issuer };
  return {
    ...base,
    issuer: `${authority}/common/v2.0`,
    discoveryIssuer: `${authority}/{tenantid}/v2.0`,
    idTokenIssuer: (claims) => `${authority}/${nonEmptyString(claims.tid) ?? "invalid-tenant"}/v2.0`,
  };
}
