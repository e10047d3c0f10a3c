// The OAuth provider's signing keys (ADR 130): made at the first start, kept in the database with
// the private part sealed at rest (core/sealed-at-rest.server.ts, re-sealed by `npm run
// secret:reseal`), rotated by `npm run oauth:keys:rotate`.
//
// One key per algorithm signs at a time: RS256 for everyone, ES256 for a client that registered
// it. A rotation adds a new pair that starts signing KEY_PUBLISH_LEAD_SECONDS later, so every
// instance (each re-reads the keys every KEY_REREAD_SECONDS) publishes it before any token it
// signs is seen; the pair it replaces stays published, for verifying only, until every token it
// can have signed has expired (lifetimes.server.ts), then cleanup removes it.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from "jose";
import { ConfigError, getConfig } from "../core/config.server";
import { openAtRest, sealAtRest, type SealedColumn, type SealPlace } from "../core/sealed-at-rest.server";
import { db } from "../../db/client.server";
import { signedTokenLongestLife } from "./lifetimes.server";

/** The algorithms a key is kept for; the first is every client's default. */
export const SIGNING_ALGORITHMS = ["RS256", "ES256"] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];
/** A rotated-in key is published this long before it signs. */
export const KEY_PUBLISH_LEAD_SECONDS = 60;
/** How long an instance keeps the keys it read before reading them again. */
export const KEY_REREAD_SECONDS = 20;

const SEAL_PURPOSE = "oauth-signing-key";
const placeOf = (kid: string): SealPlace => ({ purpose: SEAL_PURPOSE, row: kid });

/** The provider's issuer: AUTH_URL's origin (the provider needs it set), never a request's host. */
export function issuerUrl(): string {
  const config = getConfig();
  const issuer = config.provider?.issuer ?? config.origin;
  if (!issuer) throw new ConfigError(["AUTH_PROVIDER=true needs AUTH_URL: the provider's issuer is that origin, never a request's host"]);
  return issuer;
}

type KeyRow = { kid: string; alg: string; privateJwk: string; activeFrom: Date; publishedUntil: Date | null };
const KEY_COLUMNS = { kid: true, alg: true, privateJwk: true, activeFrom: true, publishedUntil: true } as const;
/** A key as the engine and the JWKS see it: `signs` false for a key kept for verifying only. */
export type SigningKeyState = { kid: string; alg: SigningAlgorithm; jwk: JWK; signs: boolean; publishedUntil: Date | null };

async function newKey(alg: SigningAlgorithm): Promise<{ kid: string; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
  return { kid, jwk: { ...(await exportJWK(privateKey)), kid, alg, use: "sig" } };
}

/** Writes a new key per algorithm that signs from `activeFrom`; the kids written. */
async function addKeyPair(activeFrom: Date): Promise<string[]> {
  const { secrets } = getConfig();
  const kids: string[] = [];
  for (const alg of SIGNING_ALGORITHMS) {
    const { kid, jwk } = await newKey(alg);
    const privateJwk = await sealAtRest(JSON.stringify(jwk), placeOf(kid), secrets);
    await db().oAuthSigningKey.create({ data: { kid, alg, privateJwk, activeFrom } });
    kids.push(kid);
  }
  return kids;
}

/**
 * Which of `rows` sign, which are only published and until when, at `now`: per algorithm the
 * newest key whose activeFrom has come signs (with none yet, the oldest one waiting); newer ones
 * wait, published; older ones are published until their publishedUntil (set by the rotation that
 * replaced them; without one, their successor's activeFrom plus the longest signed token life),
 * then dropped.
 */
export function keyStates(rows: readonly (KeyRow & { jwk: JWK })[], now: Date, accessTokenTtl: number): SigningKeyState[] {
  const life = signedTokenLongestLife(accessTokenTtl) * 1000;
  const states: SigningKeyState[] = [];
  for (const alg of SIGNING_ALGORITHMS) {
    const ofAlg = rows.filter((r) => r.alg === alg).sort((a, b) => a.activeFrom.getTime() - b.activeFrom.getTime() || a.kid.localeCompare(b.kid));
    if (ofAlg.length === 0) continue;
    const started = ofAlg.filter((r) => r.activeFrom <= now);
    const signer = started.at(-1) ?? ofAlg[0]!;
    const signerIndex = ofAlg.indexOf(signer);
    states.push({ kid: signer.kid, alg, jwk: signer.jwk, signs: true, publishedUntil: null });
    for (const [i, row] of ofAlg.entries()) {
      if (i > signerIndex) states.push({ kid: row.kid, alg, jwk: row.jwk, signs: false, publishedUntil: null });
      if (i < signerIndex) {
        const until = row.publishedUntil ?? new Date(ofAlg[i + 1]!.activeFrom.getTime() + life);
        if (until > now) states.push({ kid: row.kid, alg, jwk: row.jwk, signs: false, publishedUntil: until });
      }
    }
  }
  return states;
}

let cache: { at: number; states: Promise<SigningKeyState[]> } | null = null;

/** Reads (and on the very first start makes) the keys; a key no configured secret opens is left out, logged. */
async function readKeyStates(now: Date): Promise<SigningKeyState[]> {
  const config = getConfig();
  let rows: KeyRow[] = await db().oAuthSigningKey.findMany({ select: KEY_COLUMNS });
  if (!SIGNING_ALGORITHMS.every((alg) => rows.some((r) => r.alg === alg))) {
    // The first start: a pair that signs at once. Two instances starting together may both write
    // one; both are published and each signs with the newest, which is harmless.
    await addKeyPair(now);
    rows = await db().oAuthSigningKey.findMany({ select: KEY_COLUMNS });
  }
  const opened: (KeyRow & { jwk: JWK })[] = [];
  for (const row of rows) {
    const text = await openAtRest(row.privateJwk, placeOf(row.kid), config.secrets);
    if (text) opened.push({ ...row, jwk: JSON.parse(text) as JWK });
  }
  return keyStates(opened, now, config.provider?.accessTokenTtl ?? 0);
}

/** The keys now, read again at most every KEY_REREAD_SECONDS (and whenever a read failed). */
export function currentKeyStates(now = new Date()): Promise<SigningKeyState[]> {
  if (!cache || now.getTime() - cache.at >= KEY_REREAD_SECONDS * 1000) {
    const states = readKeyStates(now);
    cache = { at: now.getTime(), states };
    states.catch(() => {
      if (cache?.states === states) cache = null;
    });
  }
  return cache.states;
}

/** Forgets the keys read, so the next use reads them again (after a rotation in this process; tests). */
export function forgetSigningKeys(): void {
  cache = null;
}

const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth"] as const;
function publicPart(jwk: JWK): JWK {
  const copy: Record<string, unknown> = { ...jwk };
  for (const member of PRIVATE_MEMBERS) delete copy[member];
  return copy as JWK;
}

/** A key that verifies only says so, so neither the engine nor a verifier signs with it. */
function engineJwk(state: SigningKeyState): JWK {
  return state.signs ? { ...state.jwk } : { ...state.jwk, key_ops: ["verify"] };
}

/** Every key still valid — the signing ones, those waiting to sign, those kept to verify — public parts only. */
export async function publicJwks(): Promise<{ keys: JWK[] }> {
  return { keys: (await currentKeyStates()).map((state) => publicPart(engineJwk(state))) };
}

/** The same keys with their private parts, for the engine: the signing key of each algorithm first. */
export async function privateJwksForEngine(): Promise<{ keys: JWK[] }> {
  const states = await currentKeyStates();
  const ordered = [...states.filter((s) => s.signs), ...states.filter((s) => !s.signs)];
  return { keys: ordered.map(engineJwk) };
}

/**
 * `npm run oauth:keys:rotate`: a new key per algorithm that signs `lead` seconds after `now`
 * (KEY_PUBLISH_LEAD_SECONDS); every key it replaces is given its publishedUntil — the new keys'
 * activeFrom plus the longest life of a token it can sign — and cleanup removes it after that.
 */
export async function rotateSigningKeys(now = new Date(), lead = KEY_PUBLISH_LEAD_SECONDS): Promise<{ kids: string[]; activeFrom: Date }> {
  await currentKeyStates(now);
  const activeFrom = new Date(now.getTime() + lead * 1000);
  const publishedUntil = new Date(activeFrom.getTime() + signedTokenLongestLife(getConfig().provider?.accessTokenTtl ?? 0) * 1000);
  await db().oAuthSigningKey.updateMany({ where: { publishedUntil: null }, data: { publishedUntil } });
  const kids = await addKeyPair(activeFrom);
  forgetSigningKeys();
  return { kids, activeFrom };
}

/** The sealed private keys, as `secret:reseal` walks them. */
export const signingKeyColumn: SealedColumn = {
  kind: "oauth-signing-key",
  page: async (after, take) =>
    (
      await db().oAuthSigningKey.findMany({
        where: after === null ? {} : { kid: { gt: after } },
        orderBy: { kid: "asc" },
        take,
        select: { kid: true, privateJwk: true },
      })
    ).map((row) => ({ id: row.kid, sealed: row.privateJwk, at: placeOf(row.kid) })),
  replace: async (kid, sealed, privateJwk) => (await db().oAuthSigningKey.updateMany({ where: { kid, privateJwk: sealed }, data: { privateJwk } })).count,
  reread: async (kid) => {
    const row = await db().oAuthSigningKey.findUnique({ where: { kid }, select: { privateJwk: true } });
    return row ? { sealed: row.privateJwk, at: placeOf(kid) } : null;
  },
};
