// Single-use e-mail link tokens (VerificationToken rows). The link carries 32 random bytes; the
// database keeps only SHA-256(token + secret), so a copy of the table cannot be turned into
// working links, and a link cannot be forged without AUTH_SECRET. Every AUTH_SECRET value is
// tried when a link comes back, so rotating the secret does not break links already sent.
//
// Consumption is one conditional DELETE whose row count decides: of any number of concurrent
// clicks exactly one sees count 1 — PostgreSQL makes a second DELETE of the same row wait for
// the first to commit and then match nothing; SQLite runs writes one at a time.
import { randomBytes } from "node:crypto";
import { db, type Db } from "../../db/client.server";
import { sha256hex } from "../core/crypto.server";

export type TokenPurpose = "signin" | "change-email";

/** What a Prisma interactive transaction hands its callback: the same delegates as the client. */
type Client = Pick<Db, "verificationToken">;

const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

export function isWellFormedToken(token: unknown): token is string {
  return typeof token === "string" && TOKEN_PATTERN.test(token);
}

function hashes(token: string, secrets: readonly string[]): string[] {
  return [...new Set(secrets.map((secret) => sha256hex(token + secret)))];
}

/** Creates a token for `identifier` and stores its hash; the caller sends the token. */
export async function issueToken(input: {
  identifier: string;
  purpose: TokenPurpose;
  userId?: string | null;
  maxAgeSeconds: number;
  secrets: readonly [string, ...string[]];
  now?: Date;
}): Promise<{ token: string; expires: Date }> {
  const now = input.now ?? new Date();
  const token = randomBytes(32).toString("hex");
  const expires = new Date(now.getTime() + input.maxAgeSeconds * 1000);
  const client = db();
  // Housekeeping on the way: expired rows are useless and the expiry is indexed.
  await client.verificationToken.deleteMany({ where: { expires: { lt: now } } });
  await client.verificationToken.create({
    data: {
      identifier: input.identifier,
      tokenHash: sha256hex(token + input.secrets[0]),
      expires,
      purpose: input.purpose,
      userId: input.userId ?? null,
    },
  });
  return { token, expires };
}

/** Removes a token that will never be usable (its message could not be sent). */
export async function discardToken(identifier: string, token: string, secrets: readonly string[]): Promise<void> {
  await db().verificationToken.deleteMany({ where: { identifier, tokenHash: { in: hashes(token, secrets) } } });
}

type Lookup = { identifier: string; token: unknown; purpose: TokenPurpose; secrets: readonly string[]; now?: Date };

/** Whether the token is currently valid, without using it up (for confirmation pages). */
export async function peekToken(input: Lookup, client: Client = db()): Promise<{ userId: string | null } | null> {
  if (!isWellFormedToken(input.token)) return null;
  const row = await client.verificationToken.findFirst({
    where: {
      identifier: input.identifier,
      tokenHash: { in: hashes(input.token, input.secrets) },
      purpose: input.purpose,
      expires: { gt: input.now ?? new Date() },
    },
    select: { userId: true },
  });
  return row ? { userId: row.userId } : null;
}

/**
 * Uses the token up. True for exactly one caller per token, and only before it expires. An
 * expired match is deleted too, as housekeeping, but still answers false.
 */
export async function consumeToken(input: Lookup, client: Client = db()): Promise<boolean> {
  if (!isWellFormedToken(input.token)) return false;
  const now = input.now ?? new Date();
  const where = { identifier: input.identifier, tokenHash: { in: hashes(input.token, input.secrets) }, purpose: input.purpose };
  const { count } = await client.verificationToken.deleteMany({ where: { ...where, expires: { gt: now } } });
  if (count > 0) return true;
  await client.verificationToken.deleteMany({ where });
  return false;
}
