// Plain OAuth 2.0 presets whose profile is one call to the provider's API, each in its own shape:
// Facebook, Spotify and X (Twitter).
import type { PresetClientConfig } from "../../core/config.server";
import { at, nonEmptyString, type OAuthProfile, type OAuthProviderDefinition } from "./definition";

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === "object" && v !== null ? (v as Json) : {});

function requireId(v: unknown, what: string): string {
  const id = typeof v === "number" ? String(v) : nonEmptyString(v);
  if (!id) throw new Error(`${what} has no id`);
  return id;
}

/**
 * Facebook Graph `/me?fields=id,name,email,picture`. Facebook gives an address only when the
 * person has a usable one and says nothing of checking it: never verified here.
 */
export function facebookProfile(me: Json): OAuthProfile {
  return {
    id: requireId(me.id, "Facebook /me"),
    email: nonEmptyString(me.email)?.toLowerCase() ?? null,
    emailVerified: false,
    name: nonEmptyString(me.name),
    image: nonEmptyString(obj(obj(me.picture).data).url),
  };
}

export function facebookProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  const me = at("https://graph.facebook.com/me?fields=id,name,email,picture", origin);
  return {
    id: "facebook",
    name: "Facebook",
    type: "oauth",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    endpoints: {
      authorization: at("https://www.facebook.com/dialog/oauth", origin),
      token: at("https://graph.facebook.com/oauth/access_token", origin),
      userinfo: me,
    },
    scope: "email public_profile",
    clientAuth: "client_secret_post",
    fetchProfile: async (fetchJson, accessToken) => facebookProfile(obj(await fetchJson(me, accessToken))),
  };
}

/** Spotify `GET /v1/me`: Spotify says its address is not verified. */
export function spotifyProfile(me: Json): OAuthProfile {
  const images = Array.isArray(me.images) ? (me.images as unknown[]) : [];
  return {
    id: requireId(me.id, "Spotify /v1/me"),
    email: nonEmptyString(me.email)?.toLowerCase() ?? null,
    emailVerified: false,
    name: nonEmptyString(me.display_name),
    image: nonEmptyString(obj(images[0]).url),
  };
}

export function spotifyProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  const me = at("https://api.spotify.com/v1/me", origin);
  return {
    id: "spotify",
    name: "Spotify",
    type: "oauth",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    endpoints: { authorization: at("https://accounts.spotify.com/authorize", origin), token: at("https://accounts.spotify.com/api/token", origin), userinfo: me },
    scope: "user-read-email",
    fetchProfile: async (fetchJson, accessToken) => spotifyProfile(obj(await fetchJson(me, accessToken))),
  };
}

/** X `GET /2/users/me`: `{ data: { id, name, username, profile_image_url } }`; X never gives an address. */
export function twitterProfile(body: Json): OAuthProfile {
  const data = obj(body.data);
  return {
    id: requireId(data.id, "X /2/users/me"),
    email: null,
    emailVerified: false,
    name: nonEmptyString(data.name) ?? nonEmptyString(data.username),
    image: nonEmptyString(data.profile_image_url),
  };
}

/** X (Twitter), OAuth 2.0 with PKCE; a confidential client authenticates with Basic. */
export function twitterProvider(client: PresetClientConfig, _config?: unknown, origin?: string): OAuthProviderDefinition {
  const me = at("https://api.x.com/2/users/me?user.fields=profile_image_url", origin);
  return {
    id: "twitter",
    name: "X",
    type: "oauth",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    endpoints: {
      authorization: at("https://x.com/i/oauth2/authorize", origin),
      token: at("https://api.x.com/2/oauth2/token", origin),
      revocation: at("https://api.x.com/2/oauth2/revoke", origin),
      userinfo: me,
    },
    scope: "users.read tweet.read offline.access",
    fetchProfile: async (fetchJson, accessToken) => twitterProfile(obj(await fetchJson(me, accessToken))),
  };
}
