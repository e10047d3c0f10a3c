// Hosted OpenID providers with a fixed issuer and the standard claims, told apart only by their
// issuer, scopes and token endpoint authentication: LinkedIn, Slack and Twitch.
import type { PresetClientConfig } from "../../core/config.server";
import { at, type OAuthProviderDefinition } from "./definition";

/** LinkedIn's "Sign In with LinkedIn using OpenID Connect" product. */
export function linkedinProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  return {
    id: "linkedin",
    name: "LinkedIn",
    type: "oidc",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    issuer: at("https://www.linkedin.com/oauth", origin),
    scope: "openid profile email",
    clientAuth: "client_secret_post",
  };
}

/** "Sign in with Slack" (OpenID Connect); the workspace is in the https://slack.com/team_id claim. */
export function slackProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  return {
    id: "slack",
    name: "Slack",
    type: "oidc",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    issuer: at("https://slack.com", origin).replace(/\/$/, ""),
    scope: "openid profile email",
    clientAuth: "client_secret_post",
  };
}

/**
 * Twitch: OpenID Connect, but the address and picture are in the ID token and userinfo only when
 * the `claims` parameter asks for them; the display name is `preferred_username`; and its token
 * response lists `scope` as an array, which OAuth 2.0 says is a space-separated string.
 */
export function twitchProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  const wanted = { email: null, email_verified: null, picture: null, preferred_username: null };
  return {
    id: "twitch",
    name: "Twitch",
    type: "oidc",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    issuer: at("https://id.twitch.tv/oauth2", origin),
    scope: "openid user:read:email",
    authorizationParams: { claims: JSON.stringify({ id_token: wanted, userinfo: wanted }) },
    clientAuth: "client_secret_post",
    conformTokenResponse: (body) => (Array.isArray(body.scope) ? { ...body, scope: body.scope.filter((s) => typeof s === "string").join(" ") } : body),
  };
}
