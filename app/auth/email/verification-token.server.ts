// Single-use e-mail link tokens (VerificationToken rows). The link carries 32 random bytes; the
// database keeps only SHA-256(token + secret), so a copy of the table cannot be turned into
// working links, and a link cannot be forged without AUTH_SECRET. Every AUTH_SECRET value is
// tried when a link comes back, so rotating the secret does not break links already sent.
//
// Consumption is one conditional DELETE whose row count decides: of any number of concurrent
// clicks exactly one sees count 1 — PostgreSQL makes a second DELETE of the same row wait for
// the first to commit and then match nothing; SQLite runs writes one at a time.
import { db, type Db } from "../../db/client.server";
import { isWellFormedLinkToken, linkTokenHash, linkTokenHashes, newLinkToken } from "../core/crypto.server";
import { newEmailCode, newRequestId, type IssuedCode } from "./email-code.server";

import type { TokenPurpose, UsedRequest } from "./pending-request";

export type { TokenPurpose, UsedRequest };

/** What a Prisma interactive transaction hands its callback: the same delegates as the client. */
type Client = Pick<Db, "verificationToken">;

export const isWellFormedToken = isWellFormedLinkToken;
const hashes = linkTokenHashes;

/** Creates a token for `identifier` and stores its hash; the caller sends the token. */
export async function issueToken(input: {
  identifier: string;
  purpose: TokenPurpose;
  userId?: string | null;
  maxAgeSeconds: number;
  secrets: readonly [string, ...string[]];
  now?: Date;
  /** Also a 6-digit code for the same request, valid this many seconds (never past the link). */
  codeMaxAgeSeconds?: number | null;
  /** A pending sign-up: the chosen password's hash and the name typed. */
  pending?: { passwordHash: string; name: string | null };
  /** A request id even without a code, for the asking browser's cookie to name (a sign-up with codes off). */
  bindRequest?: boolean;
}): Promise<{ token: string; expires: Date; code: IssuedCode | null; requestId: string | null }> {
  const now = input.now ?? new Date();
  const token = newLinkToken();
  const expires = new Date(now.getTime() + input.maxAgeSeconds * 1000);
  const code = input.codeMaxAgeSeconds ? newEmailCode(input.secrets, Math.min(input.codeMaxAgeSeconds, input.maxAgeSeconds), now) : null;
  const requestId = code?.requestId ?? (input.bindRequest ? newRequestId() : null);
  const client = db();
  // Housekeeping on the way: expired rows are useless and the expiry is indexed.
  await client.verificationToken.deleteMany({ where: { expires: { lt: now } } });
  await client.verificationToken.create({
    data: {
      identifier: input.identifier,
      tokenHash: linkTokenHash(token, input.secrets[0]),
      expires,
      purpose: input.purpose,
      userId: input.userId ?? null,
      requestId,
      codeHash: code?.codeHash ?? null,
      codeExpires: code?.expires ?? null,
      passwordHash: input.pending?.passwordHash ?? null,
      name: input.pending?.name ?? null,
    },
  });
  return { token, expires, code, requestId };
}

/** Removes a token that will never be usable (its message could not be sent). */
export async function discardToken(identifier: string, token: string, secrets: readonly string[]): Promise<void> {
  await db().verificationToken.deleteMany({ where: { identifier, tokenHash: { in: hashes(token, secrets) } } });
}

type Lookup = { identifier: string; token: unknown; purpose: TokenPurpose; secrets: readonly string[]; now?: Date };

/** Whether the token is currently valid, without using it up (for confirmation pages). */
export async function peekToken(input: Lookup, client: Client = db()): Promise<{ userId: string | null; requestId: string | null; name: string | null } | null> {
  if (!isWellFormedToken(input.token)) return null;
  const row = await client.verificationToken.findFirst({
    where: {
      identifier: input.identifier,
      tokenHash: { in: hashes(input.token, input.secrets) },
      purpose: input.purpose,
      expires: { gt: input.now ?? new Date() },
    },
    select: { userId: true, requestId: true, name: true },
  });
  return row ? { userId: row.userId, requestId: row.requestId, name: row.name } : null;
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


/**
 * Uses the token up, for any of `purposes`, and returns what its row held. The same conditional
 * delete as consumeToken decides who wins; the row is read just before, and nothing in it changes.
 */
export async function consumeTokenRow(
  input: Omit<Lookup, "purpose"> & { purposes: readonly TokenPurpose[] },
  client: Client = db(),
): Promise<UsedRequest | null> {
  if (!isWellFormedToken(input.token)) return null;
  const now = input.now ?? new Date();
  const row = await client.verificationToken.findFirst({
    where: {
      identifier: input.identifier,
      tokenHash: { in: hashes(input.token, input.secrets) },
      purpose: { in: [...input.purposes] },
      expires: { gt: now },
    },
    select: { identifier: true, tokenHash: true, purpose: true, passwordHash: true, name: true, requestId: true },
  });
  if (!row) {
    // An expired match goes too, as housekeeping (as in consumeToken).
    await client.verificationToken.deleteMany({
      where: { identifier: input.identifier, tokenHash: { in: hashes(input.token, input.secrets) }, purpose: { in: [...input.purposes] } },
    });
    return null;
  }
  const { count } = await client.verificationToken.deleteMany({ where: { identifier: row.identifier, tokenHash: row.tokenHash, expires: { gt: now } } });
  if (count !== 1) return null;
  return { identifier: row.identifier, purpose: row.purpose as TokenPurpose, passwordHash: row.passwordHash, name: row.name, requestId: row.requestId };
}
