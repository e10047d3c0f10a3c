// Google: OpenID Connect by discovery; `email_verified` is a real boolean. access_type=offline
// asks for a refresh token (Google sends one on the first consent).
import type { PresetClientConfig } from "../../core/config.server";
import { at, type OAuthProviderDefinition } from "./definition";

export function googleProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  return {
    id: "google",
    name: "Google",
    type: "oidc",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    issuer: at("https://accounts.google.com", origin).replace(/\/$/, ""),
    scope: "openid email profile",
    authorizationParams: { access_type: "offline" },
  };
}
