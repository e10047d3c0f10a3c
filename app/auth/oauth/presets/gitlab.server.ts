// GitLab: OpenID Connect by discovery (it also advertises a revocation endpoint); gitlab.com, or
// a self-managed instance named by AUTH_GITLAB_ISSUER.
import type { PresetClientConfig } from "../../core/config.server";
import { at, type OAuthProviderDefinition } from "./definition";

export function gitlabProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  return {
    id: "gitlab",
    name: "GitLab",
    type: "oidc",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    issuer: client.issuer ?? at("https://gitlab.com", origin).replace(/\/$/, ""),
    scope: "openid profile email",
  };
}
