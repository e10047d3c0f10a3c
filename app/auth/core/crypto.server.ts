import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export function sha256hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
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
