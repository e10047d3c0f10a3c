// The pending sign-in: a first factor was proved for a user whose second
// factor is on, and no session exists yet. It lives only in the sealed `authjs.two-factor`
// cookie (a JWE under a key derived from the secret and the cookie name, like the check cookies),
// 300 seconds: who signed in, with which method, where to go after, and when the first factor
// was proved. One per browser: a new first factor replaces it. Its random id names its own budget
// of wrong codes (core/limits.server.ts).
import { randomBytes } from "node:crypto";
import { clearChunkedCookie, serializeCookie } from "../core/cookies.server";
import { encodeJwt } from "../core/jwt.server";
import type { AuthRequest } from "../core/request.server";
import { openSealedCookie } from "../core/sealed-cookies.server";

/** Seconds a pending sign-in waits for its second factor. */
export const PENDING_SIGN_IN_MAX_AGE = 300;

const PENDING_ID = /^[0-9a-f]{32}$/;
const MAX_COOKIE_VALUE = 4096;

export type PendingSignIn = {
  id: string;
  userId: string;
  /** The provider id of the first factor (credentials, email, an OAuth provider). */
  method: string;
  /** The first factor's amr-like name (pwd, email, fed). */
  firstFactor: string;
  /** The validated absolute callback URL of the first leg. */
  callbackUrl: string;
  isNewUser: boolean;
  /** When the first factor was proved (seconds since the epoch). */
  firstFactorAt: number;
  /**
   * A password reset waiting for the second factor (ADR 062): the new password's hash, sealed
   * here and written only once the code is given. Null for an ordinary sign-in.
   */
  passwordHash: string | null;
  /** The single-factor floor that new password meets (ADR 084); null beside no password or from an older cookie. */
  passwordFloorMet: number | null;
  /** The address the reset's code or link was sent to: marked verified with the reset when it is still the account's. */
  passwordResetAddress: string | null;
  /** The stored way in of the first factor (a linked account), for the session it starts. */
  credentialRef: string | null;
  /**
   * A re-authentication (ADR 080): the id of the signed-in session the first factor proved again.
   * The second factor then renews that session instead of starting one, and only in it.
   */
  reauthOf: string | null;
};

export async function issuePendingSignIn(
  ar: AuthRequest,
  pending: Omit<PendingSignIn, "id" | "firstFactorAt" | "passwordHash" | "passwordFloorMet" | "passwordResetAddress" | "credentialRef" | "reauthOf"> & {
    passwordHash?: string | null;
    passwordFloorMet?: number | null;
    passwordResetAddress?: string | null;
    credentialRef?: string | null;
    reauthOf?: string | null;
  },
  now = new Date(),
): Promise<string> {
  const name = ar.names.twoFactor;
  const payload = {
    pid: randomBytes(16).toString("hex"),
    sub: pending.userId,
    mth: pending.method,
    ff: pending.firstFactor,
    cb: pending.callbackUrl,
    new: pending.isNewUser,
    ft: Math.floor(now.getTime() / 1000),
    ...(pending.passwordHash ? { pwh: pending.passwordHash } : {}),
    ...(pending.passwordHash && typeof pending.passwordFloorMet === "number" ? { pwf: pending.passwordFloorMet } : {}),
    ...(pending.passwordHash && pending.passwordResetAddress ? { pwe: pending.passwordResetAddress } : {}),
    ...(pending.credentialRef ? { cr: pending.credentialRef } : {}),
    ...(pending.reauthOf ? { ra: pending.reauthOf } : {}),
  };
  const sealed = await encodeJwt({ payload, secrets: ar.config.secrets, salt: name, maxAge: PENDING_SIGN_IN_MAX_AGE, now });
  return serializeCookie(name, sealed, { secure: ar.secure, maxAge: PENDING_SIGN_IN_MAX_AGE });
}

const str = (v: unknown, max: number) => (typeof v === "string" && v.length > 0 && v.length <= max ? v : null);

/** The request's pending sign-in; null when absent, expired, forged or malformed. */
export async function readPendingSignIn(ar: AuthRequest, now = new Date()): Promise<PendingSignIn | null> {
  const name = ar.names.twoFactor;
  const raw = ar.cookies.get(name);
  if (!raw || raw.length > MAX_COOKIE_VALUE) return null;
  // Sealed before AUTH_SECRET was rotated: sealed again for this answer (ADR 109).
  const opened = await openSealedCookie({ kind: "two-factor", name, raw, secrets: ar.config.secrets, secure: ar.secure, clockTolerance: 0, now });
  if (!opened) return null;
  const { payload } = opened;
  const id = str(payload.pid, 32);
  const userId = str(payload.sub, 64);
  const method = str(payload.mth, 64);
  const firstFactor = str(payload.ff, 16);
  const callbackUrl = str(payload.cb, 4096);
  const firstFactorAt = typeof payload.ft === "number" ? payload.ft : null;
  if (!id || !PENDING_ID.test(id) || !userId || !method || !firstFactor || !callbackUrl || firstFactorAt === null) return null;
  // Belt and braces beside `exp`: the first factor is never older than the pending lifetime.
  if (now.getTime() / 1000 - firstFactorAt > PENDING_SIGN_IN_MAX_AGE) return null;
  const passwordHash = payload.pwh === undefined ? null : str(payload.pwh, 512);
  if (payload.pwh !== undefined && passwordHash === null) return null;
  const passwordFloorMet = passwordHash && Number.isSafeInteger(payload.pwf) ? (payload.pwf as number) : null;
  const reauthOf = payload.ra === undefined ? null : str(payload.ra, 64);
  if (payload.ra !== undefined && reauthOf === null) return null;
  return {
    id,
    userId,
    method,
    firstFactor,
    callbackUrl,
    isNewUser: payload.new === true,
    firstFactorAt,
    passwordHash,
    passwordFloorMet,
    passwordResetAddress: passwordHash ? str(payload.pwe, 320) : null,
    credentialRef: str(payload.cr, 128),
    reauthOf,
  };
}

/** Expires the pending cookie (a finished, ended or unreadable pending sign-in). */
export function clearPendingSignIn(ar: AuthRequest): string[] {
  return clearChunkedCookie(ar.cookies, ar.names.twoFactor, ar.secure);
}
