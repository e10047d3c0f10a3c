// Pairwise subjects (AUTH_PROVIDER_SUBJECT=pairwise, ADR 163; OpenID Connect Core section 8.1):
// each sector — the host of a client's redirect URIs, or of its sector_identifier_uri — sees its
// own `sub` for a user. The `sub` is random, made on first use and kept (OAuthPairwiseSubject):
// stable across tokens and across AUTH_SECRET rotations, different across hosts, and nothing a
// client could reverse. requireBearer maps it back to the user here.
import { randomToken } from "../core/crypto.server";
import { db } from "../../db/client.server";

/** Bytes of randomness in a pairwise `sub` (base64url: 22 characters). */
const SUBJECT_BYTES = 16;

const isUniqueViolation = (error: unknown) => (error as { code?: string } | null)?.code === "P2002";

/** The user's `sub` in `sector`, made on first use; of two instances making it at once, one row wins and both answer it. */
export async function pairwiseSubject(sector: string, userId: string): Promise<string> {
  const client = db();
  const known = await client.oAuthPairwiseSubject.findUnique({ where: { sector_userId: { sector, userId } }, select: { sub: true } });
  if (known) return known.sub;
  try {
    return (await client.oAuthPairwiseSubject.create({ data: { sub: randomToken(SUBJECT_BYTES), sector, userId }, select: { sub: true } })).sub;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const row = await client.oAuthPairwiseSubject.findUnique({ where: { sector_userId: { sector, userId } }, select: { sub: true } });
    if (!row) throw error;
    return row.sub;
  }
}

/** The user a pairwise `sub` stands for, or null (a public `sub`, or one never made here). */
export async function userOfPairwiseSubject(sub: string): Promise<string | null> {
  return (await db().oAuthPairwiseSubject.findUnique({ where: { sub }, select: { userId: true } }))?.userId ?? null;
}

/** The hosts of a client's redirect URIs: more than one needs a sector_identifier_uri under pairwise subjects. */
export function redirectHosts(redirectUris: readonly string[]): string[] {
  return [...new Set(redirectUris.map((u) => URL.parse(u)?.host ?? "").filter(Boolean))];
}
