// Double-submit CSRF token: the cookie holds `<token>|sha256hex(token + secret)`,
// every POST must echo the token in its body, compared in constant time.
import { randomBytes } from "node:crypto";
import { serializeCookie } from "./cookies.server";
import { constantTimeEqual, sha256hex } from "./crypto.server";
import { isCrossOriginPost } from "./origin.server";
import type { AuthRequest } from "./request.server";

const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

function hashToken(token: string, secret: string) {
  return sha256hex(`${token}${secret}`);
}

/** The token from a valid CSRF cookie, or null when the cookie is missing or forged. */
export function csrfTokenFromCookie(ar: AuthRequest): string | null {
  const raw = ar.cookies.get(ar.names.csrfToken);
  if (!raw) return null;
  const [token, hash, extra] = raw.split("|");
  if (extra !== undefined || !token || !hash || !TOKEN_PATTERN.test(token)) return null;
  return ar.config.secrets.some((s) => constantTimeEqual(hashToken(token, s), hash)) ? token : null;
}

/** The request's CSRF token, minting one (and its cookie) only when the cookie is missing or invalid. */
export function ensureCsrfToken(ar: AuthRequest): { token: string; setCookie: string | null } {
  const existing = csrfTokenFromCookie(ar);
  if (existing) return { token: existing, setCookie: null };
  const token = randomBytes(32).toString("hex");
  const value = `${token}|${hashToken(token, ar.config.secrets[0])}`;
  return { token, setCookie: serializeCookie(ar.names.csrfToken, value, { secure: ar.secure }) };
}

/**
 * True when the body's csrfToken equals the token in a valid cookie and the POST does not come
 * from another site: a foreign `Origin` fails the check even with a valid token.
 */
export function verifyCsrf(ar: AuthRequest, bodyToken: unknown): boolean {
  if (isCrossOriginPost(ar)) return false;
  if (typeof bodyToken !== "string" || !TOKEN_PATTERN.test(bodyToken)) return false;
  const cookieToken = csrfTokenFromCookie(ar);
  return cookieToken !== null && constantTimeEqual(cookieToken, bodyToken);
}
