// The session JWE, byte-compatible with Auth.js v5 (@auth/core/jwt): alg "dir", enc
// "A256CBC-HS512", key = HKDF-SHA256(secret, salt = cookie name, info = "Auth.js Generated
// Encryption Key (<salt>)", 64 bytes), kid = the key's SHA-512 JWK thumbprint. The same sealing
// protects the OAuth check cookies (salt = their cookie names); values stored at rest have their own
// sealing (sealed-at-rest.server.ts).
import { createDecipheriv, createHmac, hkdfSync, randomUUID } from "node:crypto";
import { base64url, calculateJwkThumbprint, EncryptJWT, jwtDecrypt, type JWTPayload } from "jose";
import { SESSION_CLOCK_TOLERANCE } from "./config.server";
import { constantTimeEqual } from "./crypto.server";

type Enc = "A256CBC-HS512" | "A256GCM";
type DerivedKey = { key: Uint8Array; kid: string };

const keyCache = new Map<string, Promise<DerivedKey>>();

function derive(secret: string, salt: string, enc: Enc): Promise<DerivedKey> {
  const cacheKey = `${enc}\u0000${salt}\u0000${secret}`;
  let hit = keyCache.get(cacheKey);
  if (!hit) {
    hit = (async () => {
      const length = enc === "A256GCM" ? 32 : 64;
      const key = new Uint8Array(
        hkdfSync("sha256", secret, salt, `Auth.js Generated Encryption Key (${salt})`, length),
      );
      const kid = await calculateJwkThumbprint({ kty: "oct", k: base64url.encode(key) }, `sha${key.length << 3}` as "sha512");
      return { key, kid };
    })();
    // Bounded: salts are a handful of cookie names, secrets a handful of rotation values.
    if (keyCache.size > 256) keyCache.clear();
    keyCache.set(cacheKey, hit);
  }
  return hit;
}

export type EncodeParams = {
  payload: Record<string, unknown>;
  secrets: readonly string[];
  salt: string;
  /** Seconds until `exp`. */
  maxAge: number;
  now?: Date;
};

/** Encrypts with the first secret; sets `iat`, `exp` and a fresh `jti` as Auth.js does. */
export async function encodeJwt({ payload, secrets, salt, maxAge, now = new Date() }: EncodeParams): Promise<string> {
  const { key, kid } = await derive(secrets[0]!, salt, "A256CBC-HS512");
  const iat = Math.floor(now.getTime() / 1000);
  return new EncryptJWT(payload)
    .setProtectedHeader({ alg: "dir", enc: "A256CBC-HS512", kid })
    .setIssuedAt(iat)
    .setExpirationTime(iat + maxAge)
    .setJti(randomUUID())
    .encrypt(key);
}

export type DecodeParams = {
  token: string;
  secrets: readonly string[];
  salt: string;
  clockTolerance?: number;
  now?: Date;
  /**
   * Keep the claims for this exact token (the session cookie, sent again and again). The claims
   * returned are then shared and frozen: a caller reads them, never changes them.
   */
  remember?: boolean;
};

class JweError extends Error {}

const b64 = (s: string) => Buffer.from(s, "base64url");

/**
 * The `dir` + `A256CBC-HS512` case (what Auth.js v5 and we mint) with node:crypto: RFC 7518
 * §5.2 — HMAC-SHA-512 over AAD ‖ IV ‖ ciphertext ‖ AL, first half of the tag compared in constant
 * time, then AES-256-CBC. jose does the same through WebCrypto with a key import per call, which
 * made it most of the cost of GET /auth/session. Null: not this case, let jose decide.
 */
async function decodeCbcHs512(token: string, secrets: readonly string[], salt: string, clockTolerance: number, now: Date | undefined): Promise<JWTPayload | null> {
  const parts = token.split(".");
  if (parts.length !== 5) return null;
  const [protectedB64, encryptedKey, ivB64, ciphertextB64, tagB64] = parts as [string, string, string, string, string];
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(b64(protectedB64).toString("utf8"));
  } catch {
    throw new JweError("malformed header");
  }
  if (header.alg !== "dir" || header.enc !== "A256CBC-HS512" || "zip" in header || "crit" in header) return null;
  if (encryptedKey !== "") throw new JweError("dir takes no encrypted key");
  const iv = b64(ivB64);
  const ciphertext = b64(ciphertextB64);
  const tag = b64(tagB64);
  if (iv.length !== 16 || tag.length !== 32 || ciphertext.length === 0 || ciphertext.length % 16 !== 0) throw new JweError("bad lengths");
  const aad = Buffer.from(protectedB64, "ascii");
  const al = Buffer.alloc(8);
  al.writeBigUInt64BE(BigInt(aad.length * 8));
  const kid = typeof header.kid === "string" ? header.kid : undefined;
  for (const secret of secrets) {
    const { key, kid: keyId } = await derive(secret, salt, "A256CBC-HS512");
    if (kid !== undefined && keyId !== kid) continue;
    const mac = createHmac("sha512", key.subarray(0, 32)).update(aad).update(iv).update(ciphertext).update(al).digest().subarray(0, 32);
    if (!constantTimeEqual(mac, tag)) {
      // Without a kid any configured secret may have made it (rotation): try the next one.
      if (kid === undefined) continue;
      throw new JweError("decryption failed");
    }
    const decipher = createDecipheriv("aes-256-cbc", key.subarray(32), iv);
    const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    let payload: JWTPayload;
    try {
      payload = JSON.parse(plaintext.toString("utf8"));
    } catch {
      throw new JweError("payload is not JSON");
    }
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) throw new JweError("payload is not an object");
    checkTimes(payload, clockTolerance, now);
    if (payload.iat !== undefined && typeof payload.iat !== "number") throw new JweError("bad iat");
    return payload;
  }
  throw new JweError("no matching decryption secret");
}

// Tokens decrypted lately, by secrets, salt and the token's exact text: a browser or client that
// polls GET /auth/session sends the same cookie again and again, and the same bytes always
// decrypt to the same claims, so the HMAC, the AES and the JSON parse run once per token. Times
// are checked again at every use; only tokens that decrypted are kept; bounded, oldest first.
const DECODED_MAX = 10_000;
// By salt, then token: a key made of both would be a new string as long as the token (over 600
// bytes) at every lookup.
const decoded = new WeakMap<readonly string[], Map<string, Map<string, JWTPayload>>>();

function checkTimes(payload: JWTPayload, clockTolerance: number, now: Date | undefined) {
  const t = Math.floor((now ?? new Date()).getTime() / 1000);
  if (payload.exp !== undefined && (typeof payload.exp !== "number" || payload.exp <= t - clockTolerance)) throw new JweError("expired");
  if (payload.nbf !== undefined && (typeof payload.nbf !== "number" || payload.nbf > t + clockTolerance)) throw new JweError("not yet valid");
}

/** Decrypts and checks `exp` (15 s tolerance); throws on anything wrong. Tries every secret. */
export async function decodeJwt({
  token,
  secrets,
  salt,
  clockTolerance = SESSION_CLOCK_TOLERANCE,
  now,
  remember = false,
}: DecodeParams): Promise<JWTPayload> {
  let bySalt = decoded.get(secrets);
  if (!bySalt) decoded.set(secrets, (bySalt = new Map()));
  let byToken = bySalt.get(salt);
  if (!byToken) bySalt.set(salt, (byToken = new Map()));
  const known = remember ? byToken.get(token) : undefined;
  if (known) {
    checkTimes(known, clockTolerance, now);
    return known;
  }
  const fast = await decodeCbcHs512(token, secrets, salt, clockTolerance, now);
  if (fast && !remember) return fast;
  if (fast) {
    Object.freeze(fast);
    if (byToken.size >= DECODED_MAX) byToken.delete(byToken.keys().next().value!);
    byToken.set(token, fast);
    return fast;
  }
  const { payload } = await jwtDecrypt(
    token,
    async ({ kid, enc }) => {
      if (enc !== "A256CBC-HS512" && enc !== "A256GCM") throw new Error("unsupported enc");
      for (const secret of secrets) {
        const derived = await derive(secret, salt, enc as Enc);
        if (kid === undefined || derived.kid === kid) return derived.key;
      }
      throw new Error("no matching decryption secret");
    },
    {
      clockTolerance,
      keyManagementAlgorithms: ["dir"],
      contentEncryptionAlgorithms: ["A256CBC-HS512", "A256GCM"],
      currentDate: now,
    },
  );
  return payload;
}

/** Like decodeJwt but null instead of an exception. */
export async function tryDecodeJwt(params: DecodeParams): Promise<JWTPayload | null> {
  try {
    return await decodeJwt(params);
  } catch {
    return null;
  }
}
