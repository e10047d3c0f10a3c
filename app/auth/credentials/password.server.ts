// Password hashing with Argon2id (@node-rs/argon2, prebuilt binaries). Unknown e-mails are
// checked against a dummy hash made with the same parameters, so both answers take the same time.
import { hash, verify } from "@node-rs/argon2";
import { normalizePassword } from "./password-policy.server";

// OWASP's Argon2id baseline: 19 MiB, 2 passes, 1 lane.
const PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

/** Hashes the NFKC form, so the same password typed differently matches. */
export function hashPassword(password: string): Promise<string> {
  return hash(normalizePassword(password), PARAMS);
}

let dummyHash: Promise<string> | null = null;

async function matches(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/**
 * Verifies `password` against `stored`, or against a dummy hash when there is none. The NFKC form
 * is tried first; a password stored before hashes were normalised is tried as typed, which costs
 * a second hash only for the passwords that NFKC changes.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  const target = stored ?? (await (dummyHash ??= hash("vestibule-dummy-password", PARAMS)));
  const normalized = normalizePassword(password);
  let ok = await matches(target, normalized);
  if (!ok && normalized !== password) ok = await matches(target, password);
  return stored ? ok : false;
}
