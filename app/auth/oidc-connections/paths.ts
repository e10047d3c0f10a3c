// The URLs and names of an organization's OpenID Connect connection (ADR 151). No imports: the
// routes, the registry's method label and the sign-in page's "Continue with" read them here.

/**
 * Where every OpenID Connect connection's URLs live: `/sso/oidc/<connectionId>/…`, beside SAML's
 * `/sso/<connectionId>/…` (one more path segment, so the two never meet) and with ids of their own.
 */
export const OIDC_SSO_PREFIX = "/sso/oidc";

export const oidcSignInPath = (connectionId: string) => `${OIDC_SSO_PREFIX}/${encodeURIComponent(connectionId)}/signin`;
/** The redirect URI the organization registers at its IdP. */
export const oidcCallbackPath = (connectionId: string) => `${OIDC_SSO_PREFIX}/${encodeURIComponent(connectionId)}/callback`;

/** The session's method (Session.method) of every sign-in through a connection, and how pages name it. */
export const OIDC_CONNECTION_METHOD = "oidc-connection";
export const OIDC_CONNECTION_METHOD_LABEL = "OpenID Connect";

/** A session's credentialRef: `oidc-connection:<OidcIdentity id>` (requireSso reads the prefix). */
export const oidcCredentialRef = (identityId: string) => `${OIDC_CONNECTION_METHOD}:${identityId}`;

/** The key a connection's pending flows carry in the OAuth check cookies (never a provider id: those have no colon). */
export const oidcFlowKey = (connectionId: string) => `${OIDC_CONNECTION_METHOD}:${connectionId}`;
