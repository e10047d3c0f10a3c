// Recovery codes (ADR 074, which replaces ADR 044's format): ten single-use codes of 16
// characters from Crockford's base32 (80 random bits each), shown once as `xxxx-xxxx-xxxx-xxxx`
// and typed with or without the hyphens, in either case.
//
// Stored as ASVS 5.0 6.5.2 and NIST 800-63B-4 ask for a secret of fewer than 112 bits: a salted
// password hash (Argon2id). The first two characters are also kept in the clear as a lookup tag,
// so a typed code is verified against the one stored code that starts the same way (rarely two),
// not against all ten; what stays secret is 14 characters, 70 bits — above the 64 required.
// The stored value is `r2:<tag>:<PHC string>`, so it tells itself apart from the codes of
// ADR 044 (10 characters, an HMAC under a key from AUTH_SECRET), which keep working until the
// user replaces them: both formats are read.
import { randomInt } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";
import { keyedHashes } from "../core/sealed-at-rest.server";

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
/** Characters of a code; 5 bits each. */
export const RECOVERY_CODE_LENGTH = 16;
/** Characters of the clear lookup tag (their 10 bits are not counted as secret). */
const TAG_LENGTH = 2;
const GROUP = 4;
/** ADR 044's codes: still read, never written. */
const LEGACY_LENGTH = 10;
const LEGACY_HASH_PURPOSE = "vestibule.recovery-code";
const STORED_PREFIX = "r2:";

// OWASP's Argon2id baseline (19 MiB, 2 passes, 1 lane): the password hash's cost, on purpose the
// same order — the code is random, but a database copy must still not be cheap to search.
// Verifying one code takes tens of milliseconds; one is verified per attempt (see above).
const PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    let raw = "";
    for (let i = 0; i < RECOVERY_CODE_LENGTH; i++) raw += ALPHABET[randomInt(ALPHABET.length)];
    return raw.match(new RegExp(`.{${GROUP}}`, "g"))!.join("-");
  });
}

/** A typed code in canonical form and which format it is; null when it cannot be a recovery code. */
export type CanonicalRecoveryCode = { format: "current" | "legacy"; code: string };

/**
 * Case, spaces and hyphens do not matter, and Crockford's look-alikes (i, l → 1; o → 0) are read
 * as meant. 16 characters: a code of this format; 10: one of ADR 044's.
 */
export function normalizeRecoveryCode(typed: string): CanonicalRecoveryCode | null {
  const raw = typed
    .toLowerCase()
    .replace(/[\s-]/g, "")
    .replace(/[il]/g, "1")
    .replace(/o/g, "0");
  if (![...raw].every((c) => ALPHABET.includes(c))) return null;
  if (raw.length === RECOVERY_CODE_LENGTH) return { format: "current", code: raw };
  if (raw.length === LEGACY_LENGTH) return { format: "legacy", code: raw };
  return null;
}

/** What a stored value of the current format starts with, for the code's lookup tag. */
export function storedTagPrefix(canonical: string): string {
  return `${STORED_PREFIX}${canonical.slice(0, TAG_LENGTH)}:`;
}

/** The value stored for a canonical code of the current format: tag and a salted Argon2id hash. */
export async function hashRecoveryCode(canonical: string): Promise<string> {
  return `${storedTagPrefix(canonical)}${await hash(canonical, PARAMS)}`;
}

let dummy: Promise<string> | null = null;

/**
 * Whether `canonical` is the code `stored` holds. With no candidate (`stored` null) a dummy hash
 * is verified instead, so a wrong tag costs the same time as a wrong code with a right tag.
 */
export async function recoveryCodeMatches(stored: string | null, canonical: string): Promise<boolean> {
  const phc = stored?.slice(storedTagPrefix(canonical).length) ?? (await (dummy ??= hash("vestibule-dummy-recovery-code", PARAMS)));
  try {
    return (await verify(phc, canonical)) && stored !== null;
  } catch {
    return false;
  }
}

/** ADR 044's stored hashes of a legacy canonical code for `userId`, first AUTH_SECRET value first. */
export function legacyRecoveryCodeHashes(userId: string, canonical: string, secrets: readonly string[]): string[] {
  return keyedHashes(`${userId}\n${canonical}`, LEGACY_HASH_PURPOSE, secrets);
}
