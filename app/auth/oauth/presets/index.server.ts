// The OAuth/OIDC providers the configuration turns on, in display order: the generic OIDC
// provider, the named ones (AUTH_OIDC_<NAME>_*), then the presets in PRESET_IDS order.
import type { AuthConfig, PresetClientConfig, PresetId } from "../../core/config.server";
import { PRESET_IDS } from "../../core/config.server";
import { appleProvider } from "./apple.server";
import type { OAuthProviderDefinition } from "./definition";
import { discordProvider } from "./discord.server";
import { githubProvider } from "./github.server";
import { gitlabProvider } from "./gitlab.server";
import { googleProvider } from "./google.server";
import { microsoftEntraIdProvider } from "./microsoft-entra-id.server";
import { facebookProvider, spotifyProvider, twitterProvider } from "./oauth2-apis.server";
import { namedOidcProvider, oidcProvider } from "./oidc.server";
import { linkedinProvider, slackProvider, twitchProvider } from "./oidc-hosted.server";
import { auth0Provider, cognitoProvider, keycloakProvider, oktaProvider } from "./tenant.server";

/**
 * One preset: its client settings and the configuration → its definition. `origin` is the test
 * hook of docs/providers.md: it puts every endpoint of the preset on a local imitation; only tests
 * pass it (through presetDefinition), no setting does.
 */
type Preset = (client: PresetClientConfig, config: AuthConfig, origin?: string) => OAuthProviderDefinition;

const PRESETS: Record<PresetId, Preset> = {
  apple: appleProvider,
  auth0: auth0Provider,
  cognito: cognitoProvider,
  discord: discordProvider,
  facebook: facebookProvider,
  github: githubProvider,
  gitlab: gitlabProvider,
  google: googleProvider,
  keycloak: keycloakProvider,
  linkedin: linkedinProvider,
  "microsoft-entra-id": (client, _config, origin) => microsoftEntraIdProvider(client, origin),
  okta: oktaProvider,
  slack: slackProvider,
  spotify: spotifyProvider,
  twitch: twitchProvider,
  twitter: twitterProvider,
};

/** A preset's definition; with `origin`, every endpoint on that origin instead of the provider's hosts (tests). */
export function presetDefinition(id: PresetId, client: PresetClientConfig, config: AuthConfig, origin?: string): OAuthProviderDefinition {
  return PRESETS[id](client, config, origin);
}

const definitions = new WeakMap<AuthConfig, OAuthProviderDefinition[]>();

export function oauthDefinitions(config: AuthConfig): OAuthProviderDefinition[] {
  let list = definitions.get(config);
  if (!list) {
    list = [];
    if (config.oidc) list.push(oidcProvider(config.oidc));
    for (const named of config.oidcProviders) list.push(namedOidcProvider(named));
    for (const id of PRESET_IDS) {
      const client = config.presets[id];
      if (client) list.push(presetDefinition(id, client, config));
    }
    definitions.set(config, list);
  }
  return list;
}
