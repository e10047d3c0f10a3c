// Password hashing with Argon2id (@node-rs/argon2, prebuilt binaries). Unknown e-mails are
// checked against a dummy hash made with the same parameters, so both answers take the same time.
import { hash, verify } from "@node-rs/argon2";

// OWASP's Argon2id baseline: 19 MiB, 2 passes, 1 lane.
const PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMS);
}

let dummyHash: Promise<string> | null = null;

/** Verifies `password` against `stored`, or against a dummy hash when there is none. */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  const target = stored ?? (await (dummyHash ??= hash("vestibule-dummy-password", PARAMS)));
  try {
    const ok = await verify(target, password);
    return stored ? ok : false;
  } catch {
    return false;
  }
}
