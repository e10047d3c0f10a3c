// GitHub: plain OAuth 2.0 (no ID token). The profile comes from GET /user, the address from
// GET /user/emails — only a verified one, the primary first — so an unverified address on a
// GitHub account can never be used to reach someone else's Vestibule account.
import type { AuthConfig, PresetClientConfig } from "../../core/config.server";
import { at, nonEmptyString, type OAuthProfile, type OAuthProviderDefinition, type ProfileFetcher } from "./definition";

const API = "https://api.github.com";

type GitHubEmail = { email?: unknown; primary?: unknown; verified?: unknown };

export async function githubProfile(fetchJson: ProfileFetcher, accessToken: string, api = API): Promise<OAuthProfile> {
  const user = (await fetchJson(`${api}/user`, accessToken)) as Record<string, unknown>;
  const emails = (await fetchJson(`${api}/user/emails`, accessToken)) as unknown;
  const verified = (Array.isArray(emails) ? (emails as GitHubEmail[]) : []).filter(
    (e) => e.verified === true && typeof e.email === "string",
  );
  const chosen = verified.find((e) => e.primary === true) ?? verified[0];
  if (typeof user.id !== "number" && typeof user.id !== "string") throw new Error("GitHub /user has no id");
  return {
    id: String(user.id),
    email: chosen ? (chosen.email as string).toLowerCase() : null,
    emailVerified: chosen !== undefined,
    name: nonEmptyString(user.name) ?? nonEmptyString(user.login),
    image: nonEmptyString(user.avatar_url),
  };
}

export function githubProvider(client: PresetClientConfig, config: Pick<AuthConfig, "siteName">, origin?: string): OAuthProviderDefinition {
  const api = origin ? at(API, origin).replace(/\/$/, "") : API;
  return {
    id: "github",
    name: "GitHub",
    type: "oauth",
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    endpoints: {
      authorization: at("https://github.com/login/oauth/authorize", origin),
      token: at("https://github.com/login/oauth/access_token", origin),
      userinfo: `${api}/user`,
    },
    scope: "read:user user:email",
    clientAuth: "client_secret_post",
    // GitHub asks for a User-Agent naming the application: the site's name (AUTH_SITE_NAME).
    apiHeaders: { Accept: "application/vnd.github+json", "User-Agent": config.siteName, "X-GitHub-Api-Version": "2022-11-28" },
    fetchProfile: (fetchJson, accessToken) => githubProfile(fetchJson, accessToken, api),
  };
}
