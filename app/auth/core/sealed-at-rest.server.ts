// Values sealed at rest in a database column — TOTP secrets, OAuth provider tokens: the one function
// pair every such value goes through. A compact JWE (dir + A256GCM) under a key derived from
// AUTH_SECRET with HKDF for one purpose, its kid naming the secret that sealed it, so rotation works
// like everywhere else in core — the first secret seals, every configured secret opens. The
// protected header binds the ciphertext to its row: copied to another user's row or column it no
// longer opens.
import { createHash, createHmac, hkdfSync } from "node:crypto";
import { base64url, calculateJwkThumbprint, compactDecrypt, CompactEncrypt } from "jose";
import { log } from "./log.server";

type SealKey = { key: Uint8Array; kid: string };
const keys = new Map<string, Promise<SealKey>>();

function sealKey(secret: string, at: SealPlace): Promise<SealKey> {
  const label = at.format?.keyLabel ?? `Vestibule sealing key (${at.purpose})`;
  const cacheKey = `${at.purpose}\u0000${label}\u0000${secret}`;
  let hit = keys.get(cacheKey);
  if (!hit) {
    hit = (async () => {
      const key = new Uint8Array(hkdfSync("sha256", secret, at.purpose, label, 32));
      return { key, kid: await calculateJwkThumbprint({ kty: "oct", k: base64url.encode(key) }) };
    })();
    // Bounded: a handful of purposes times a handful of rotation values.
    if (keys.size > 64) keys.clear();
    keys.set(cacheKey, hit);
  }
  return hit;
}

const bindingOf = (at: SealPlace) =>
  createHash("sha256")
    .update(at.format?.bindsPurpose === false ? at.row : `${at.purpose}\u0000${at.row}`)
    .digest("base64url");

/** Where a sealed value lives: what it is for (the HKDF salt) and the row (and column) it belongs to. */
export type SealPlace = {
  purpose: string;
  row: string;
  /**
   * For a purpose whose values were sealed before this pair served every purpose (OAuth tokens,
   * ADR 012), how that code derived its key and bound its row, so what it stored still opens and
   * what is sealed now reads the same. New purposes leave it out.
   */
  format?: { keyLabel: string; bindsPurpose: boolean };
};

export async function sealAtRest(value: string, at: SealPlace, secrets: readonly string[]): Promise<string> {
  const { key, kid } = await sealKey(secrets[0]!, at);
  return new CompactEncrypt(new TextEncoder().encode(value))
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid, "vst.bind": bindingOf(at) })
    .encrypt(key);
}

/** The sealed value, or null when sealed for another row or purpose, or under a secret no longer configured. */
export async function openAtRest(sealed: string, at: SealPlace, secrets: readonly string[]): Promise<string | null> {
  try {
    const { plaintext, protectedHeader } = await compactDecrypt(
      sealed,
      async ({ kid }) => {
        for (const secret of secrets) {
          const k = await sealKey(secret, at);
          if (k.kid === kid) return k.key;
        }
        throw new Error("no configured secret matches the sealed value's kid");
      },
      { keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"] },
    );
    if (protectedHeader["vst.bind"] !== bindingOf(at)) return null;
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
