// Discord: plain OAuth 2.0; the profile is GET /users/@me, whose `verified` flag says whether
// the address was confirmed.
import type { PresetClientConfig } from "../../core/config.server";
import { at, nonEmptyString, type OAuthProfile, type OAuthProviderDefinition } from "./definition";

const API = "https://discord.com/api";

/** GET /users/@me → profile; the address counts as verified only with `verified: true`. */
export function discordProfile(me: Record<string, unknown>): OAuthProfile {
  const id = nonEmptyString(me.id);
  if (!id) throw new Error("Discord /users/@me has no id");
  const avatar = nonEmptyString(me.avatar);
  return {
    id,
    email: nonEmptyString(me.email)?.toLowerCase() ?? null,
    emailVerified: me.verified === true,
    name: nonEmptyString(me.global_name) ?? nonEmptyString(me.username),
    image: avatar ? `https://cdn.discordapp.com/avatars/${id}/${avatar}.png` : null,
  };
}

export function discordProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  const me = at(`${API}/users/@me`, origin);
  return {
    id: "discord",
    name: "Discord",
    type: "oauth",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    endpoints: {
      authorization: at("https://discord.com/oauth2/authorize", origin),
      token: at(`${API}/oauth2/token`, origin),
      revocation: at(`${API}/oauth2/token/revoke`, origin),
      userinfo: me,
    },
    scope: "identify email",
    clientAuth: "client_secret_post",
    fetchProfile: async (fetchJson, accessToken) => discordProfile((await fetchJson(me, accessToken)) as Record<string, unknown>),
  };
}
