import { hash, randomBytes, timingSafeEqual } from "node:crypto";

// crypto.hash, not createHash: one call, no Hash object and its stream machinery (a session
// lookup and the CSRF cookie's check run it on every request).
export function sha256hex(value: string): string {
  return hash("sha256", value, "hex");
}

// Single-use link tokens (e-mailed links, "This wasn't me"): 32 random bytes in hex; the database
// keeps only SHA-256(token + secret), so a copy of the table cannot be turned into working links
// and a link cannot be forged without AUTH_SECRET.
const LINK_TOKEN_PATTERN = /^[0-9a-f]{64}$/;

export function newLinkToken(): string {
  return randomBytes(32).toString("hex");
}

export function isWellFormedLinkToken(token: unknown): token is string {
  return typeof token === "string" && LINK_TOKEN_PATTERN.test(token);
}

/** What a row stores for `token` under the newest secret. */
export function linkTokenHash(token: string, secret: string): string {
  return sha256hex(token + secret);
}

/** The stored forms of `token` under every secret (a rotated secret keeps sent links working). */
export function linkTokenHashes(token: string, secrets: readonly string[]): string[] {
  return [...new Set(secrets.map((secret) => linkTokenHash(token, secret)))];
}

/** `bytes` random bytes as base64url. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/**
 * Compares two secrets or tokens in constant time over their bytes (strings as UTF-8). The byte
 * lengths are checked first: a string's length in characters says nothing about its length in
 * bytes (one "é" is two), and timingSafeEqual throws on inputs of different byte lengths.
 * The length itself is not secret here: every caller compares fixed-size values.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const x = typeof a === "string" ? Buffer.from(a, "utf8") : a;
  const y = typeof b === "string" ? Buffer.from(b, "utf8") : b;
  return x.byteLength === y.byteLength && timingSafeEqual(x, y);
}
