// Recovery codes (ADR 044): ten single-use codes of 10 characters from Crockford's base32 (50
// random bits each), shown once as `xxxxx-xxxxx`. Only a keyed hash (HMAC-SHA-256 under a key
// derived from AUTH_SECRET, bound to the user) is stored: the codes carry enough entropy that a
// slow hash buys nothing against someone who has the key too, and a fast keyed hash lets one
// indexed lookup find the row, which argon2's salted hashes would not (ten slow verifications
// per attempt).
import { randomInt } from "node:crypto";
import { keyedHashes } from "../core/sealed-at-rest.server";

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const CODE_LENGTH = 10;
const HASH_PURPOSE = "vestibule.recovery-code";

export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    let raw = "";
    for (let i = 0; i < CODE_LENGTH; i++) raw += ALPHABET[randomInt(ALPHABET.length)];
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
}

/**
 * A typed recovery code in its canonical form, or null when it cannot be one: case, spaces and
 * hyphens do not matter, and Crockford's look-alikes (i, l → 1; o → 0) are read as meant.
 */
export function normalizeRecoveryCode(typed: string): string | null {
  const raw = typed
    .toLowerCase()
    .replace(/[\s-]/g, "")
    .replace(/[il]/g, "1")
    .replace(/o/g, "0");
  if (raw.length !== CODE_LENGTH || ![...raw].every((c) => ALPHABET.includes(c))) return null;
  return raw;
}

/** The stored hashes of a canonical code for `userId`, first AUTH_SECRET value first. */
export function recoveryCodeHashes(userId: string, canonical: string, secrets: readonly string[]): string[] {
  return keyedHashes(`${userId}\n${canonical}`, HASH_PURPOSE, secrets);
}
