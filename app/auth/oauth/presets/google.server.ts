// Google: OpenID Connect by discovery; `email_verified` is a real boolean. access_type=offline
// asks for a refresh token (Google sends one on the first consent).
import type { OAuthClientConfig } from "../../core/config.server";
import type { OAuthProviderDefinition } from "./definition";

export function googleProvider(client: OAuthClientConfig): OAuthProviderDefinition {
  return {
    id: "google",
    name: "Google",
    type: "oidc",
    ...client,
    issuer: "https://accounts.google.com",
    scope: "openid email profile",
    authorizationParams: { access_type: "offline" },
  };
}
