// What an OAuth 2.0 / OpenID Connect provider is, as data. Every preset in this folder is one of
// these; the strategy (oauth/strategy.server.ts) reads them and never branches on a provider id.

/** The person the provider vouches for, in Vestibule's terms. */
export type OAuthProfile = {
  /** The provider's stable id for the person (`sub` for OIDC): Account.providerAccountId. */
  id: string;
  /** Lower-cased; null when the provider gave none (or, for GitHub, none that is verified). */
  email: string | null;
  /** True only when the provider says it checked the address. */
  emailVerified: boolean;
  name: string | null;
  image: string | null;
};

export type Claims = Record<string, unknown>;

/** Makes the provider's own API calls (time budget, error classification) for profile fetchers. */
export type ProfileFetcher = (url: string, accessToken: string, headers?: Record<string, string>) => Promise<unknown>;

export type OAuthProviderDefinition = {
  id: string;
  name: string;
  /** `oidc`: an ID token is required and verified. `oauth`: plain OAuth 2.0, profile from an API. */
  type: "oidc" | "oauth";
  clientId: string;
  clientSecret: string;
  /** A client secret made at each use instead of `clientSecret` (Apple's signed JWT). */
  makeClientSecret?: () => Promise<string>;
  /** Discovery: `<issuer>/.well-known/openid-configuration`. */
  issuer?: string;
  /** The `issuer` value the discovery document states, when it is not `issuer` itself. */
  discoveryIssuer?: string;
  /** Explicit endpoints for providers without discovery; override discovered values when both exist. */
  endpoints?: {
    authorization?: string;
    token?: string;
    userinfo?: string;
    revocation?: string;
    introspection?: string;
    endSession?: string;
    jwks?: string;
  };
  /** Space-separated scopes of the authorization request. */
  scope: string;
  /** Extra authorization request parameters (say `access_type=offline`). */
  authorizationParams?: Record<string, string>;
  /** How the client authenticates at the token, revocation and introspection endpoints. */
  clientAuth?: "client_secret_basic" | "client_secret_post";
  /** `form_post`: the provider returns with a POST to the callback instead of a redirect. */
  responseMode?: "query" | "form_post";
  /** The ID token's expected `iss` when it depends on the token (multi-tenant Entra ID). */
  idTokenIssuer?: (claims: Claims) => string;
  /** Plain OAuth 2.0: reads the profile with the access token. */
  fetchProfile?: (fetchJson: ProfileFetcher, accessToken: string) => Promise<OAuthProfile>;
  /**
   * Turns ID-token claims (merged with userinfo) into a profile; `answer` is the authorization
   * response's parameters (Apple sends the person's name there, once). Default: standard claims.
   */
  profile?: (claims: Claims, answer: URLSearchParams) => OAuthProfile;
  /** Fixes a successful token response's JSON before it is checked (Twitch sends `scope` as an array). */
  conformTokenResponse?: (body: Record<string, unknown>) => Record<string, unknown>;
  /** Headers every call to this provider's API needs (GitHub wants a User-Agent). */
  apiHeaders?: Record<string, string>;
  /** Opt-in: signing out of Vestibule also ends the session at the provider (end_session_endpoint). */
  federatedSignOut?: boolean;
};

const str = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : null);

/** The standard OIDC claims (Auth.js's default mapping): sub, email, email_verified, name, picture. */
export function standardProfile(claims: Claims): OAuthProfile {
  const sub = str(claims.sub);
  if (!sub) throw new Error("the profile has no sub");
  return {
    id: sub,
    email: str(claims.email)?.toLowerCase() ?? null,
    // Some providers send the boolean as a string.
    emailVerified: claims.email_verified === true || claims.email_verified === "true",
    name: str(claims.name) ?? str(claims.nickname) ?? str(claims.preferred_username),
    image: str(claims.picture),
  };
}

export { str as nonEmptyString };

/**
 * A preset's URL, on `origin` instead of the provider's host when one is given. Only tests pass
 * an origin (a local imitation of the provider's endpoints, docs/providers.md "Testing a
 * preset"); no setting reaches it.
 */
export function at(url: string, origin?: string): string {
  if (!origin) return url;
  const u = new URL(url);
  return `${origin.replace(/\/$/, "")}${u.pathname}${u.search}`;
}
