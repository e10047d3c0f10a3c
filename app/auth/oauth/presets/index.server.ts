// The OAuth/OIDC providers the configuration turns on, in display order: the generic OIDC
// provider and the presets.
import type { AuthConfig, PresetId } from "../../core/config.server";
import type { OAuthProviderDefinition } from "./definition";
import { discordProvider } from "./discord.server";
import { githubProvider } from "./github.server";
import { gitlabProvider } from "./gitlab.server";
import { googleProvider } from "./google.server";
import { microsoftEntraIdProvider } from "./microsoft-entra-id.server";
import { oidcProvider } from "./oidc.server";

const PRESETS: Record<PresetId, (client: { clientId: string; clientSecret: string }, config: AuthConfig) => OAuthProviderDefinition> = {
  github: githubProvider,
  google: googleProvider,
  gitlab: gitlabProvider,
  discord: discordProvider,
  "microsoft-entra-id": (client) => microsoftEntraIdProvider(client),
};

const definitions = new WeakMap<AuthConfig, OAuthProviderDefinition[]>();

export function oauthDefinitions(config: AuthConfig): OAuthProviderDefinition[] {
  let list = definitions.get(config);
  if (!list) {
    list = [];
    if (config.oidc) list.push(oidcProvider(config.oidc));
    for (const [id, preset] of Object.entries(PRESETS) as [PresetId, (typeof PRESETS)[PresetId]][]) {
      const client = config.presets[id];
      if (client) list.push(preset(client, config));
    }
    definitions.set(config, list);
  }
  return list;
}
