// GitLab.com: OpenID Connect by discovery (it also advertises a revocation endpoint).
import type { OAuthClientConfig } from "../../core/config.server";
import type { OAuthProviderDefinition } from "./definition";

export function gitlabProvider(client: OAuthClientConfig): OAuthProviderDefinition {
  return {
    id: "gitlab",
    name: "GitLab",
    type: "oidc",
    ...client,
    issuer: "https://gitlab.com",
    scope: "openid profile email",
  };
}
