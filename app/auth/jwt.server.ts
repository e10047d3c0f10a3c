// The session JWE, byte-compatible with Auth.js v5 (@auth/core/jwt): alg "dir", enc
// "A256CBC-HS512", key = HKDF-SHA256(secret, salt = cookie name, info = "Auth.js Generated
// Encryption Key (<salt>)", 64 bytes), kid = the key's SHA-512 JWK thumbprint. The same sealing
// protects the OAuth check cookies (salt = their cookie names) and tokens stored at rest.
import { hkdfSync, randomUUID } from "node:crypto";
import { base64url, calculateJwkThumbprint, EncryptJWT, jwtDecrypt, type JWTPayload } from "jose";
import { SESSION_CLOCK_TOLERANCE } from "./config.server";

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
};

/** Decrypts and checks `exp` (15 s tolerance); throws on anything wrong. Tries every secret. */
export async function decodeJwt({
  token,
  secrets,
  salt,
  clockTolerance = SESSION_CLOCK_TOLERANCE,
  now,
}: DecodeParams): Promise<JWTPayload> {
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
