// How long each thing the OAuth provider issues lives (docs/features/provider.md): the one place
// these numbers are written. The access token's lifetime is a setting
// (AUTH_PROVIDER_ACCESS_TOKEN_TTL, app/auth/core/config.server.ts); the rest are fixed.
const DAY = 24 * 60 * 60;

/** An authorization code: one minute, used once. */
export const AUTHORIZATION_CODE_TTL = 60;
/** An ID token. */
export const ID_TOKEN_TTL = 60 * 60;
/** A back-channel logout token. */
export const LOGOUT_TOKEN_TTL = 2 * 60;
/** A refresh token unused this long expires (idle bound). */
export const REFRESH_TOKEN_IDLE_TTL = 30 * DAY;
/** No refresh token, rotated or not, outlives its grant's first issue by more than this. */
export const REFRESH_TOKEN_ABSOLUTE_TTL = 90 * DAY;
/** A grant (what the user allowed one client): as long as the longest refresh token. */
export const GRANT_TTL = REFRESH_TOKEN_ABSOLUTE_TTL;
/** A device code and its user code (RFC 8628): ten minutes. */
export const DEVICE_CODE_TTL = 10 * 60;
/** How often a device may poll the token endpoint, seconds. */
export const DEVICE_POLL_INTERVAL = 5;
/** An authorization in progress: long enough for a sign-in by e-mailed link or a second factor. */
export const INTERACTION_TTL = 60 * 60;

/**
 * The longest life of anything a signing key signs (ID tokens, JWT access tokens, logout tokens):
 * a key that no longer signs stays published this long after its successor took over, plus a
 * minute for clocks that disagree.
 */
export function signedTokenLongestLife(accessTokenTtl: number): number {
  return Math.max(ID_TOKEN_TTL, accessTokenTtl, LOGOUT_TOKEN_TTL) + 60;
}
