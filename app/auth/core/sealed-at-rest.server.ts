// Values sealed at rest in a database column (a TOTP secret): a compact JWE (dir + A256GCM) under
// a key derived from AUTH_SECRET with HKDF for one purpose, its kid naming the secret that sealed
// it, so rotation works like everywhere else in core — the first secret seals, every configured
// secret opens. The protected header binds the ciphertext to its row: copied to another user's
// row it no longer opens.
import { createHash, createHmac, hkdfSync } from "node:crypto";
import { base64url, calculateJwkThumbprint, compactDecrypt, CompactEncrypt } from "jose";
import { log } from "./log.server";

type SealKey = { key: Uint8Array; kid: string };
const keys = new Map<string, Promise<SealKey>>();

function sealKey(secret: string, purpose: string): Promise<SealKey> {
  const cacheKey = `${purpose}\u0000${secret}`;
  let hit = keys.get(cacheKey);
  if (!hit) {
    hit = (async () => {
      const key = new Uint8Array(hkdfSync("sha256", secret, purpose, `Vestibule sealing key (${purpose})`, 32));
      return { key, kid: await calculateJwkThumbprint({ kty: "oct", k: base64url.encode(key) }) };
    })();
    // Bounded: a handful of purposes times a handful of rotation values.
    if (keys.size > 64) keys.clear();
    keys.set(cacheKey, hit);
  }
  return hit;
}

const bindingOf = (purpose: string, row: string) => createHash("sha256").update(`${purpose}\u0000${row}`).digest("base64url");

/** Where a sealed value lives: what it is for (the HKDF salt) and the row it belongs to. */
export type SealPlace = { purpose: string; row: string };

export async function sealAtRest(value: string, at: SealPlace, secrets: readonly string[]): Promise<string> {
  const { key, kid } = await sealKey(secrets[0]!, at.purpose);
  return new CompactEncrypt(new TextEncoder().encode(value))
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid, "vst.bind": bindingOf(at.purpose, at.row) })
    .encrypt(key);
}

/** The sealed value, or null when sealed for another row or purpose, or under a secret no longer configured. */
export async function openAtRest(sealed: string, at: SealPlace, secrets: readonly string[]): Promise<string | null> {
  try {
    const { plaintext, protectedHeader } = await compactDecrypt(
      sealed,
      async ({ kid }) => {
        for (const secret of secrets) {
          const k = await sealKey(secret, at.purpose);
          if (k.kid === kid) return k.key;
        }
        throw new Error("no configured secret matches the sealed value's kid");
      },
      { keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"] },
    );
    if (protectedHeader["vst.bind"] !== bindingOf(at.purpose, at.row)) return null;
    return new TextDecoder().decode(plaintext);
  } catch (error) {
    log("warn", "sealed-value-unopened", { purpose: at.purpose, error });
    return null;
  }
}

/**
 * A keyed hash (HMAC-SHA-256, hex) of a short secret such as a recovery code, under a key derived
 * from one AUTH_SECRET value for `purpose`: a copy of the table alone cannot be searched offline.
 * One hash per configured secret, first secret first, so lookups survive rotation.
 */
export function keyedHashes(value: string, purpose: string, secrets: readonly string[]): string[] {
  return [
    ...new Set(
      secrets.map((secret) => {
        const key = Buffer.from(hkdfSync("sha256", secret, purpose, `Vestibule keyed hash (${purpose})`, 32));
        return createHmac("sha256", key).update(value).digest("hex");
      }),
    ),
  ];
}
