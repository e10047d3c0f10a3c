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

/**
 * Why a sealed value was refused: `malformed` (not a JWE we can read: garbage, a damaged or
 * truncated value), `no-key` (no configured secret opens it: forged, or sealed with a secret since
 * dropped from AUTH_SECRET), `expired`, `invalid` (opened, but its claims are not what we seal).
 */
export type RefusalReason = "malformed" | "no-key" | "expired" | "invalid";

class JweError extends Error {
  constructor(
    message: string,
    readonly reason: RefusalReason,
  ) {
    super(message);
  }
}

/** Claims that opened, and which AUTH_SECRET value opened them (0: the first, the one that seals). */
export type Opened = { readonly payload: JWTPayload; readonly keyIndex: number };

const b64 = (s: string) => Buffer.from(s, "base64url");

/**
 * The `dir` + `A256CBC-HS512` case (what Auth.js v5 and we mint) with node:crypto: RFC 7518
 * §5.2 — HMAC-SHA-512 over AAD ‖ IV ‖ ciphertext ‖ AL, first half of the tag compared in constant
 * time, then AES-256-CBC. jose does the same through WebCrypto with a key import per call, which
 * made it most of the cost of GET /auth/session. Null: not this case, let jose decide.
 */
async function decodeCbcHs512(token: string, secrets: readonly string[], salt: string, clockTolerance: number, now: Date | undefined): Promise<Opened | null> {
  const parts = token.split(".");
  if (parts.length !== 5) return null;
  const [protectedB64, encryptedKey, ivB64, ciphertextB64, tagB64] = parts as [string, string, string, string, string];
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(b64(protectedB64).toString("utf8"));
  } catch {
    throw new JweError("malformed header", "malformed");
  }
  if (header.alg !== "dir" || header.enc !== "A256CBC-HS512" || "zip" in header || "crit" in header) return null;
  if (encryptedKey !== "") throw new JweError("dir takes no encrypted key", "malformed");
  const iv = b64(ivB64);
  const ciphertext = b64(ciphertextB64);
  const tag = b64(tagB64);
  if (iv.length !== 16 || tag.length !== 32 || ciphertext.length === 0 || ciphertext.length % 16 !== 0) throw new JweError("bad lengths", "malformed");
  const aad = Buffer.from(protectedB64, "ascii");
  const al = Buffer.alloc(8);
  al.writeBigUInt64BE(BigInt(aad.length * 8));
  const kid = typeof header.kid === "string" ? header.kid : undefined;
  for (const [keyIndex, secret] of secrets.entries()) {
    const { key, kid: keyId } = await derive(secret, salt, "A256CBC-HS512");
    if (kid !== undefined && keyId !== kid) continue;
    const mac = createHmac("sha512", key.subarray(0, 32)).update(aad).update(iv).update(ciphertext).update(al).digest().subarray(0, 32);
    if (!constantTimeEqual(mac, tag)) {
      // Without a kid any configured secret may have made it (rotation): try the next one.
      if (kid === undefined) continue;
      throw new JweError("decryption failed", "no-key");
    }
    const decipher = createDecipheriv("aes-256-cbc", key.subarray(32), iv);
    const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    let payload: JWTPayload;
    try {
      payload = JSON.parse(plaintext.toString("utf8"));
    } catch {
      throw new JweError("payload is not JSON", "invalid");
    }
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) throw new JweError("payload is not an object", "invalid");
    checkTimes(payload, clockTolerance, now);
    if (payload.iat !== undefined && typeof payload.iat !== "number") throw new JweError("bad iat", "invalid");
    return { payload, keyIndex };
  }
  throw new JweError("no matching decryption secret", "no-key");
}

// Tokens decrypted lately, by secrets, salt and the token's exact text: a browser or client that
// polls GET /auth/session sends the same cookie again and again, and the same bytes always
// decrypt to the same claims, so the HMAC, the AES and the JSON parse run once per token. Times
// are checked again at every use; only tokens that decrypted are kept; bounded, oldest first.
const DECODED_MAX = 10_000;
// By salt, then token: a key made of both would be a new string as long as the token (over 600
// bytes) at every lookup.
const decoded = new WeakMap<readonly string[], Map<string, Map<string, Opened>>>();

function checkTimes(payload: JWTPayload, clockTolerance: number, now: Date | undefined) {
  const t = Math.floor((now ?? new Date()).getTime() / 1000);
  if (payload.exp !== undefined && (typeof payload.exp !== "number" || payload.exp <= t - clockTolerance)) throw new JweError("expired", "expired");
  if (payload.nbf !== undefined && (typeof payload.nbf !== "number" || payload.nbf > t + clockTolerance)) throw new JweError("not yet valid", "invalid");
}

/**
 * Decrypts and checks `exp` (15 s tolerance); throws on anything wrong (a JweError naming the
 * reason, or jose's own error). Tries every secret; says which one opened it.
 */
async function open({ token, secrets, salt, clockTolerance = SESSION_CLOCK_TOLERANCE, now, remember = false }: DecodeParams): Promise<Opened> {
  let bySalt = decoded.get(secrets);
  if (!bySalt) decoded.set(secrets, (bySalt = new Map()));
  let byToken = bySalt.get(salt);
  if (!byToken) bySalt.set(salt, (byToken = new Map()));
  const known = remember ? byToken.get(token) : undefined;
  if (known) {
    checkTimes(known.payload, clockTolerance, now);
    return known;
  }
  const fast = await decodeCbcHs512(token, secrets, salt, clockTolerance, now);
  if (fast && !remember) return fast;
  if (fast) {
    Object.freeze(fast.payload);
    if (byToken.size >= DECODED_MAX) byToken.delete(byToken.keys().next().value!);
    byToken.set(token, fast);
    return fast;
  }
  let keyIndex = -1;
  const { payload } = await jwtDecrypt(
    token,
    async ({ kid, enc }) => {
      if (enc !== "A256CBC-HS512" && enc !== "A256GCM") throw new JweError("unsupported enc", "malformed");
      for (const [i, secret] of secrets.entries()) {
        const derived = await derive(secret, salt, enc as Enc);
        if (kid === undefined || derived.kid === kid) {
          keyIndex = i;
          return derived.key;
        }
      }
      throw new JweError("no matching decryption secret", "no-key");
    },
    {
      clockTolerance,
      keyManagementAlgorithms: ["dir"],
      contentEncryptionAlgorithms: ["A256CBC-HS512", "A256GCM"],
      currentDate: now,
    },
  );
  return { payload, keyIndex };
}

/** Decrypts and checks `exp` (15 s tolerance); throws on anything wrong. Tries every secret. */
export async function decodeJwt(params: DecodeParams): Promise<JWTPayload> {
  return (await open(params)).payload;
}

/** Like decodeJwt but null instead of an exception. */
export async function tryDecodeJwt(params: DecodeParams): Promise<JWTPayload | null> {
  try {
    return await decodeJwt(params);
  } catch {
    return null;
  }
}

/** Why jose or our own decoder refused a token, as a bounded reason. */
function reasonOf(error: unknown): RefusalReason {
  if (error instanceof JweError) return error.reason;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ERR_JWT_EXPIRED") return "expired";
  if (code === "ERR_JWE_DECRYPTION_FAILED") return "no-key";
  if (code === "ERR_JWT_CLAIM_VALIDATION_FAILED") return "invalid";
  return "malformed";
}

/**
 * Opens a sealed value and says how: its claims and which secret opened them (a `keyIndex` above 0:
 * sealed before AUTH_SECRET was rotated, to be sealed again with resealJwt), or why it was
 * refused. Never throws for a bad token. A remembered token's answer is the one kept (no new
 * object per request, ADR 069).
 */
export async function openJwt(params: DecodeParams): Promise<Opened | { refused: RefusalReason }> {
  try {
    return await open(params);
  } catch (error) {
    return { refused: reasonOf(error) };
  }
}

/**
 * The same claims sealed again with the first secret — `iat`, `exp`, `jti` and every other claim
 * unchanged, so nothing it stands for lasts longer or looks newer than it did (ADR 109).
 */
export async function resealJwt({ payload, secrets, salt }: { payload: JWTPayload; secrets: readonly string[]; salt: string }): Promise<string> {
  const { key, kid } = await derive(secrets[0]!, salt, "A256CBC-HS512");
  return new EncryptJWT({ ...payload }).setProtectedHeader({ alg: "dir", enc: "A256CBC-HS512", kid }).encrypt(key);
}
