// A user's second factor in the database: the TOTP credential (secret sealed at rest) and the
// recovery-code hashes. Every change that must not half-happen is one transaction, and every code
// is spent by one conditional UPDATE whose row count decides, so of concurrent requests carrying
// the same code exactly one succeeds.
import { db } from "../../db/client.server";
import { openAtRestDetail, resealStale, sealAtRest, type SealedColumn } from "../core/sealed-at-rest.server";
import { asciiDigits } from "../core/typed-code";
import {
  generateRecoveryCodes,
  hashRecoveryCode,
  legacyRecoveryCodeHashes,
  normalizeRecoveryCode,
  recoveryCodeMatches,
  storedTagPrefix,
} from "./recovery-codes.server";
import { generateTotpSecret, isTotpCode, matchTotpStep } from "./totp.server";
import { hasUsablePasskey, sessionProvedTwoFactors } from "../accounts/second-factor-gate.server";
import type { AuthConfig } from "../core/config.server";

const SEAL_PURPOSE = "vestibule.totp-secret";

type Secrets = readonly [string, ...string[]];

/** What a user's second factor looks like from /account. */
export type TwoFactorStatus = { enabled: boolean; recoveryCodesLeft: number };

/** True when the user has a confirmed TOTP authenticator: every sign-in then needs a code. */
export async function secondFactorEnabled(userId: string): Promise<boolean> {
  const row = await db().twoFactorCredential.findUnique({ where: { userId }, select: { confirmedAt: true } });
  return Boolean(row?.confirmedAt);
}

/**
 * What the second step of a one-factor sign-in can take from this user, or null when there is no
 * such step: a TOTP (or recovery) code while TOTP is on (ADR 043), and — then, or when
 * AUTH_REQUIRE_MFA is on and the user has a passkey — the user's passkey (ADR 104). Under required
 * MFA a passkey is the second factor of every other sign-in, not a way round the requirement.
 */
export type SecondStep = { code: boolean; passkey: boolean };

export async function secondStepOf(userId: string, config: StepConfig): Promise<SecondStep | null> {
  const [code, passkey] = await Promise.all([secondFactorEnabled(userId), hasUsablePasskey(userId, config)]);
  return code || (config.requireMfa && passkey) ? { code, passkey } : null;
}

/** What decides the second step: required MFA, and whether passkeys are on at all (AUTH_PASSKEYS). */
type StepConfig = Pick<AuthConfig, "requireMfa" | "passkeys">;

/**
 * True when the session `sessionId` of `userId` may add a way to sign in that the second factor
 * does not cover (a passkey, ADR 045): the user has no second step (above), or that session proved
 * two factors itself (its recorded factors include `mfa`). A session from before the factor was
 * turned on (or, under AUTH_REQUIRE_MFA, the first passkey added), or of unknown factors, may not.
 */
export async function sessionMayAddExemptMethod(userId: string, sessionId: string | null, config: StepConfig): Promise<boolean> {
  if (!(await secondStepOf(userId, config))) return true;
  return sessionProvedTwoFactors(userId, sessionId);
}

export async function twoFactorStatus(userId: string): Promise<TwoFactorStatus> {
  const [row, left] = await Promise.all([
    db().twoFactorCredential.findUnique({ where: { userId }, select: { confirmedAt: true } }),
    db().recoveryCode.count({ where: { userId, usedAt: null } }),
  ]);
  return { enabled: Boolean(row?.confirmedAt), recoveryCodesLeft: row?.confirmedAt ? left : 0 };
}

const placeOf = (userId: string) => ({ purpose: SEAL_PURPOSE, row: userId });

/**
 * The user's TOTP secret and the sealed value the row holds now. Sealed with a secret other than
 * the first (AUTH_SECRET was rotated), it is written back sealed with the first — one UPDATE
 * conditional on the value read — so dropping the old secret later keeps the factor (ADR 109).
 */
async function openSecret(userId: string, sealed: string, secrets: Secrets): Promise<{ secret: string; sealed: string } | null> {
  const opened = await openAtRestDetail(sealed, placeOf(userId), secrets);
  if (!opened) return null;
  if (opened.current) return { secret: opened.value, sealed };
  const now = await resealStale(sealed, opened.value, placeOf(userId), secrets, async (secretSealed) => {
    const { count } = await db().twoFactorCredential.updateMany({ where: { userId, secretSealed: sealed }, data: { secretSealed } });
    return count;
  });
  return { secret: opened.value, sealed: now };
}

/** Every stored TOTP secret (confirmed or pending), for `npm run secret:reseal`; rows by credential id. */
export const totpSecretColumn: SealedColumn = {
  kind: "totp-secret",
  page: async (after, take) =>
    (
      await db().twoFactorCredential.findMany({
        where: after === null ? {} : { id: { gt: after } },
        orderBy: { id: "asc" },
        take,
        select: { id: true, userId: true, secretSealed: true },
      })
    ).map((row) => ({ id: row.id, sealed: row.secretSealed, at: placeOf(row.userId) })),
  replace: async (id, sealed, secretSealed) => (await db().twoFactorCredential.updateMany({ where: { id, secretSealed: sealed }, data: { secretSealed } })).count,
  reread: async (id) => {
    const row = await db().twoFactorCredential.findUnique({ where: { id }, select: { userId: true, secretSealed: true } });
    return row ? { sealed: row.secretSealed, at: placeOf(row.userId) } : null;
  },
};

/**
 * totp-start: a new secret for a user whose second factor is off, kept sealed on an unconfirmed
 * row (it replaces an earlier unconfirmed one). Null when the second factor is already on.
 */
export async function startEnrolment(userId: string, secrets: Secrets): Promise<string | null> {
  const secret = generateTotpSecret();
  const secretSealed = await sealAtRest(secret, placeOf(userId), secrets);
  const client = db();
  const { count } = await client.twoFactorCredential.updateMany({
    where: { userId, confirmedAt: null },
    data: { secretSealed, lastUsedStep: null },
  });
  if (count === 1) return secret;
  try {
    await client.twoFactorCredential.create({ data: { userId, secretSealed } });
    return secret;
  } catch {
    // The row exists and is confirmed (or a concurrent start created it): nothing changed here.
    return null;
  }
}

/** The secret of an enrolment started but not confirmed, to show it again; null otherwise. */
export async function pendingEnrolmentSecret(userId: string, secrets: Secrets): Promise<string | null> {
  const row = await db().twoFactorCredential.findUnique({ where: { userId } });
  if (!row || row.confirmedAt) return null;
  return (await openSecret(userId, row.secretSealed, secrets))?.secret ?? null;
}

/** Fresh recovery codes and their stored values, hashed before any transaction opens (ADR 074). */
type NewRecoveryCodes = { codes: string[]; stored: string[] };

async function newRecoveryCodes(): Promise<NewRecoveryCodes> {
  const codes = generateRecoveryCodes();
  // One at a time: ten Argon2id hashes at once would hold ten times its memory.
  const stored: string[] = [];
  for (const code of codes) stored.push(await hashRecoveryCode(normalizeRecoveryCode(code)!.code));
  return { codes, stored };
}

/** Writes fresh recovery codes in `tx` (the old ones go) and returns them, to be shown once. */
async function replaceRecoveryCodes(tx: Pick<ReturnType<typeof db>, "recoveryCode">, userId: string, fresh: NewRecoveryCodes): Promise<string[]> {
  await tx.recoveryCode.deleteMany({ where: { userId } });
  await tx.recoveryCode.createMany({ data: fresh.stored.map((hash) => ({ userId, hash })) });
  return fresh.codes;
}

/** A typed authenticator or recovery code: digits of any script read as ASCII, spaces dropped. */
function typedSecondFactorCode(typed: string): string {
  return asciiDigits(typed).replace(/\s/g, "");
}

export type ConfirmOutcome = { ok: true; recoveryCodes: string[] } | { ok: false; reason: "not-started" | "wrong-code" };

/**
 * totp-confirm: a first valid code turns the second factor on (that code's step counts as used)
 * and creates the recovery codes, in one transaction.
 */
export async function confirmEnrolment(userId: string, typed: string, secrets: Secrets, now = new Date()): Promise<ConfirmOutcome> {
  const code = typedSecondFactorCode(typed);
  const row = await db().twoFactorCredential.findUnique({ where: { userId } });
  if (!row || row.confirmedAt) return { ok: false, reason: "not-started" };
  const opened = await openSecret(userId, row.secretSealed, secrets);
  if (!opened) return { ok: false, reason: "not-started" };
  const step = matchTotpStep(opened.secret, code, now);
  if (step === null) return { ok: false, reason: "wrong-code" };
  const fresh = await newRecoveryCodes();
  const recoveryCodes = await db().$transaction(async (tx) => {
    // Conditional on the row read above: a concurrent start (new secret) or confirm wins alone.
    const { count } = await tx.twoFactorCredential.updateMany({
      where: { id: row.id, confirmedAt: null, secretSealed: opened.sealed },
      data: { confirmedAt: now, lastUsedStep: step },
    });
    if (count !== 1) return null;
    return replaceRecoveryCodes(tx, userId, fresh);
  });
  return recoveryCodes ? { ok: true, recoveryCodes } : { ok: false, reason: "not-started" };
}

/** Which second factor a code proved: an authenticator code, or a recovery code (now spent). */
export type SecondFactor = { kind: "totp" } | { kind: "recovery"; left: number };

/**
 * Checks `code` for a user whose second factor is on and spends it: a TOTP code only for a time
 * step after the last one accepted (so each code works once), a recovery code only while unused.
 * Null when the code is wrong, used, or the second factor is off.
 */
export async function spendSecondFactorCode(userId: string, typed: string, secrets: Secrets, now = new Date()): Promise<SecondFactor | null> {
  const code = typedSecondFactorCode(typed);
  const client = db();
  if (isTotpCode(code)) {
    const row = await client.twoFactorCredential.findUnique({ where: { userId } });
    if (!row?.confirmedAt) return null;
    const opened = await openSecret(userId, row.secretSealed, secrets);
    const step = opened ? matchTotpStep(opened.secret, code, now) : null;
    if (step === null) return null;
    const { count } = await client.twoFactorCredential.updateMany({
      where: { id: row.id, confirmedAt: { not: null }, OR: [{ lastUsedStep: null }, { lastUsedStep: { lt: step } }] },
      data: { lastUsedStep: step },
    });
    return count === 1 ? { kind: "totp" } : null;
  }
  const canonical = normalizeRecoveryCode(code);
  if (!canonical) return null;
  if (!(await secondFactorEnabled(userId))) return null;
  const spent = canonical.format === "legacy" ? await spendLegacyRecoveryCode(userId, canonical.code, secrets, now) : await spendRecoveryCode(userId, canonical.code, now);
  if (!spent) return null;
  return { kind: "recovery", left: await client.recoveryCode.count({ where: { userId, usedAt: null } }) };
}

/**
 * Whether `typed`, refused by spendSecondFactorCode, is a TOTP code that was right for a time step
 * already used (the same code twice, or an older one): the page then says to wait for the next
 * code rather than that the code is wrong. Asked only after a refusal; it spends nothing.
 */
export async function isUsedTotpCode(userId: string, typed: string, secrets: Secrets, now = new Date()): Promise<boolean> {
  const code = typedSecondFactorCode(typed);
  if (!isTotpCode(code)) return false;
  const row = await db().twoFactorCredential.findUnique({ where: { userId } });
  if (!row?.confirmedAt || row.lastUsedStep === null) return false;
  const opened = await openSecret(userId, row.secretSealed, secrets);
  const step = opened ? matchTotpStep(opened.secret, code, now) : null;
  return step !== null && step <= row.lastUsedStep;
}

/**
 * A code of the current format: the unused codes with its lookup tag (one, rarely two) are
 * verified — at least one hash always, a dummy when none has the tag — and the one that matches is
 * spent by a conditional UPDATE whose row count decides between concurrent requests.
 */
async function spendRecoveryCode(userId: string, canonical: string, now: Date): Promise<boolean> {
  const client = db();
  const candidates = await client.recoveryCode.findMany({
    where: { userId, usedAt: null, hash: { startsWith: storedTagPrefix(canonical) } },
    select: { id: true, hash: true },
  });
  if (candidates.length === 0) {
    await recoveryCodeMatches(null, canonical);
    return false;
  }
  for (const candidate of candidates) {
    if (!(await recoveryCodeMatches(candidate.hash, canonical))) continue;
    const { count } = await client.recoveryCode.updateMany({ where: { id: candidate.id, usedAt: null }, data: { usedAt: now } });
    return count === 1;
  }
  return false;
}

/** A code of ADR 044's format, stored as a keyed hash: one indexed, conditional UPDATE. */
async function spendLegacyRecoveryCode(userId: string, canonical: string, secrets: Secrets, now: Date): Promise<boolean> {
  const { count } = await db().recoveryCode.updateMany({
    where: { userId, hash: { in: legacyRecoveryCodeHashes(userId, canonical, secrets) }, usedAt: null },
    data: { usedAt: now },
  });
  return count === 1;
}

/** totp-disable, once a code was accepted: the credential and every recovery code go, together. */
export async function removeSecondFactor(userId: string): Promise<void> {
  await db().$transaction([
    db().recoveryCode.deleteMany({ where: { userId } }),
    db().twoFactorCredential.deleteMany({ where: { userId } }),
  ]);
}

/** recovery-codes, once a code was accepted: ten new codes replace the old ones. */
export async function regenerateRecoveryCodes(userId: string): Promise<string[]> {
  const fresh = await newRecoveryCodes();
  return db().$transaction((tx) => replaceRecoveryCodes(tx, userId, fresh));
}
