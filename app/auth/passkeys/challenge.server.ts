// The WebAuthn challenge (`authjs.challenge`, sealed, 900 s, single use). Each
// options request adds a challenge to this browser's cookie; the callback takes out the one the
// browser signed. The cookie keeps a few (the newest first), so two tabs — or the sign-in page's
// autofill request and its button — do not undo each other, as with the OAuth check cookies
// (ADR 011). Single use is enforced twice: the callback removes the entry from the cookie, and a
// verified answer records the challenge's hash in the database, so the same cookie and the same
// assertion replayed are refused even by a client that keeps the old cookie.
import { db } from "../../db/client.server";
import { CHALLENGE_COOKIE_MAX_AGE } from "../core/config.server";
import { expireCookie, serializeCookie } from "../core/cookies.server";
import { constantTimeEqual, sha256hex } from "../core/crypto.server";
import { encodeJwt } from "../core/jwt.server";
import { openSealedCookie } from "../core/sealed-cookies.server";
import type { AuthRequest } from "../core/request.server";

/** Ceremonies one browser may have pending at once; a sixth evicts the oldest. */
export const MAX_PENDING_CHALLENGES = 5;

/**
 * reauthenticate: the signed-in user proves themselves again with one of their own passkeys (ADR
 * 080); second-step: the user of a pending sign-in gives their passkey as its second factor (ADR 104).
 */
export type CeremonyAction = "authenticate" | "register" | "reauthenticate" | "second-step";

export type PendingChallenge = {
  challenge: string;
  action: CeremonyAction;
  /** register: the signed-in user the passkey is for; reauthenticate, second-step: the user to prove; authenticate: null. */
  userId: string | null;
  /** Seconds since the epoch. */
  expiresAt: number;
};

const now = () => Math.floor(Date.now() / 1000);

function isPending(v: unknown): v is PendingChallenge {
  if (typeof v !== "object" || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e.challenge === "string" &&
    (e.action === "authenticate" || e.action === "register" || e.action === "reauthenticate" || e.action === "second-step") &&
    (e.userId === null || typeof e.userId === "string") &&
    typeof e.expiresAt === "number"
  );
}

async function readPending(ar: AuthRequest): Promise<PendingChallenge[]> {
  const name = ar.names.challenge;
  const raw = ar.cookies.get(name);
  if (!raw) return [];
  // Every read is followed by a rewrite (issueChallenge, takeChallenge), sealed with the first
  // secret; a read that is not is re-sealed for the answer all the same (ADR 109).
  const opened = await openSealedCookie({ kind: "passkey-challenge", name, raw, secrets: ar.config.secrets, secure: ar.secure, clockTolerance: 0 });
  const payload = opened?.payload;
  const list = Array.isArray(payload?.pending) ? payload.pending : [];
  const t = now();
  return list.filter(isPending).filter((e) => e.expiresAt > t);
}

async function writePending(ar: AuthRequest, pending: PendingChallenge[]): Promise<string> {
  const name = ar.names.challenge;
  if (pending.length === 0) return expireCookie(name, ar.secure);
  const maxAge = Math.max(1, Math.max(...pending.map((e) => e.expiresAt)) - now());
  const token = await encodeJwt({ payload: { pending }, secrets: ar.config.secrets, salt: name, maxAge });
  return serializeCookie(name, token, { secure: ar.secure, maxAge, expires: new Date((now() + maxAge) * 1000) });
}

/** Adds a challenge to this browser's cookie; returns its Set-Cookie. */
export async function issueChallenge(ar: AuthRequest, challenge: string, action: CeremonyAction, userId: string | null): Promise<string> {
  const entry: PendingChallenge = { challenge, action, userId, expiresAt: now() + CHALLENGE_COOKIE_MAX_AGE };
  const kept = (await readPending(ar)).slice(0, MAX_PENDING_CHALLENGES - 1);
  return writePending(ar, [entry, ...kept]);
}

/**
 * Takes the entry for `challenge` (the one the browser signed) out of the cookie. `setCookie`
 * rewrites the cookie without it (or expires it) and is sent whatever the outcome.
 */
export async function takeChallenge(ar: AuthRequest, challenge: string | null): Promise<{ entry: PendingChallenge | null; setCookie: string }> {
  const pending = await readPending(ar);
  const index = challenge === null ? -1 : pending.findIndex((e) => constantTimeEqual(e.challenge, challenge));
  if (index < 0) return { entry: null, setCookie: await writePending(ar, pending) };
  const entry = pending[index]!;
  return { entry, setCookie: await writePending(ar, pending.filter((_, i) => i !== index)) };
}

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

/**
 * Records a verified answer's challenge as used, inside the transaction that acts on it. A
 * challenge already recorded throws (the unique key), which rolls the whole step back.
 */
export async function spendChallenge(tx: Tx, entry: PendingChallenge): Promise<void> {
  await tx.passkeyChallenge.create({ data: { challengeHash: sha256hex(entry.challenge), expires: new Date(entry.expiresAt * 1000) } });
}

/** Forgets used challenges whose cookie has expired anyway (cheap: an indexed delete). */
export async function forgetExpiredChallenges(): Promise<void> {
  await db().passkeyChallenge.deleteMany({ where: { expires: { lt: new Date() } } });
}

/**
 * Whether a write failed because of what the request asked (a challenge already spent, a
 * credential registered already, a user gone: Prisma's unique and foreign-key refusals) rather
 * than because the database failed, which is the Configuration error like everywhere else.
 */
export function isRefusedWrite(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "P2002" || code === "P2003" || code === "P2025";
}
