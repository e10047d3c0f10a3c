// The OAuth/OIDC providers the configuration turns on, in display order, and their entries in the
// provider registry (providers.server.ts): a strategy on the Authenticator plus the two legs.
import { signInWithOAuth } from "../accounts.server";
import { validateCallbackUrl } from "../core/callback-url.server";
import type { AuthConfig, PresetId } from "../core/config.server";
import type { Provider } from "../providers.server";
import { runStrategy } from "../signin.server";
import { consumeFlow } from "../strategies/oauth-checks.server";
import { OAuthStrategy } from "../strategies/oauth.server";
import type { SignInResult } from "../users.server";
import type { OAuthProviderDefinition } from "./definition";
import { discordProvider } from "./discord.server";
import { githubProvider } from "./github.server";
import { gitlabProvider } from "./gitlab.server";
import { googleProvider } from "./google.server";
import { microsoftEntraIdProvider } from "./microsoft-entra-id.server";
import { oidcProvider } from "./oidc.server";

const PRESETS: Record<PresetId, (client: { clientId: string; clientSecret: string }) => OAuthProviderDefinition> = {
  github: githubProvider,
  google: googleProvider,
  gitlab: gitlabProvider,
  discord: discordProvider,
  "microsoft-entra-id": microsoftEntraIdProvider,
};

const definitions = new WeakMap<AuthConfig, OAuthProviderDefinition[]>();

export function oauthDefinitions(config: AuthConfig): OAuthProviderDefinition[] {
  let list = definitions.get(config);
  if (!list) {
    list = [];
    if (config.oidc) list.push(oidcProvider(config.oidc));
    for (const [id, preset] of Object.entries(PRESETS) as [PresetId, (typeof PRESETS)[PresetId]][]) {
      const client = config.presets[id];
      if (client) list.push(preset(client));
    }
    definitions.set(config, list);
  }
  return list;
}

/** The registry's source for OAuth and OIDC sign-in (SOURCES in providers.server.ts). */
export function oauthProviders(config: AuthConfig): Provider[] {
  return oauthDefinitions(config).map((definition) => ({
    id: definition.id,
    name: definition.name,
    type: definition.type,
    strategy: new OAuthStrategy<SignInResult>(definition, config, (p) =>
      signInWithOAuth({ request: p.request, config: p.config, provider: p.provider, profile: p.profile, tokens: p.tokens }),
    ) as Provider["strategy"],
    signIn: (ctx) => runStrategy(ctx, definition.id),
    async callback(ctx) {
      // The flow's check cookies are used up whatever happens next: success, a provider error or
      // a failed check. Putting their Set-Cookie headers on the flow means every response
      // runStrategy builds, redirects to an error page included, carries them.
      const state = typeof ctx.body.state === "string" ? ctx.body.state : null;
      const { result, setCookies } = await consumeFlow(ctx.ar, definition.id, state, definition.type === "oidc");
      ctx.setCookies.push(...setCookies);
      // The flow's own callback URL wins over the shared callback-url cookie (validated again).
      const own = result.ok && result.flow.callbackUrl ? validateCallbackUrl(result.flow.callbackUrl, ctx.ar.origin) : null;
      if (own) ctx.callbackUrl = own;
      return runStrategy(ctx, definition.id);
    },
    // GET: the usual redirect back; POST: response_mode=form_post (no CSRF token: the state,
    // PKCE and nonce checks are what tie the answer to this browser).
    callbackMethods: ["GET", "POST"],
    callbackRequiresCsrf: false,
  }));
}
