import { createHash, randomBytes } from "node:crypto";

export function sha256hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** `bytes` random bytes as base64url. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
