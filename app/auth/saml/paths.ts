// The URLs of a SAML connection (docs/features/saml.md). No imports: the root's cross-site POST
// check lets the assertion consumer through by this pattern, and the routes build their URLs here.

/** Where every connection's URLs live: `/sso/<connectionId>/…`. */
export const SSO_PREFIX = "/sso";

export const metadataPath = (connectionId: string) => `${SSO_PREFIX}/${encodeURIComponent(connectionId)}/metadata`;
export const acsPath = (connectionId: string) => `${SSO_PREFIX}/${encodeURIComponent(connectionId)}/acs`;
export const startPath = (connectionId: string) => `${SSO_PREFIX}/${encodeURIComponent(connectionId)}/signin`;
/** Where the ACS sends the browser (a same-site GET that carries the binding cookie, ADR 154, amended). */
export const finishPath = (connectionId: string) => `${SSO_PREFIX}/${encodeURIComponent(connectionId)}/finish`;

/**
 * The assertion consumer: an identity provider's browser POST arrives from the IdP's site, with
 * no CSRF token and no SameSite=Lax cookie. What binds it to the connection is the stored request
 * id (ADR 154); to the browser, the finish step after it (ADR 154, amended).
 */
export const ACS_PATH_PATTERN = /^\/sso\/[^/]+\/acs\/?$/;

/** The session's method (Session.method) of every SAML sign-in, and how pages name it. */
export const SAML_METHOD = "saml";
export const SAML_METHOD_LABEL = "SAML";
/** A SAML session's credentialRef: this prefix and the SamlIdentity id (ADR 155). */
export const SAML_CREDENTIAL_PREFIX = "saml:";
