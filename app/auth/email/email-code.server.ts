// E-mailed codes (contract section 15): every e-mail that carries a sign-in, sign-up or reset link
// also carries a 6-digit code for the same pending request (the same VerificationToken row), typed
// in the browser that asked. docs/decisions/047-email-code-binding.md.
//
// - The code comes from crypto.randomInt; the row keeps only HMAC-SHA256(secret, requestId + code):
//   six digits are a million values, which a plain hash of a leaked table would give away at once.
// - The answer that sent the e-mail sets authjs.email-code: a JWE naming the row's random
//   requestId (never the code or the address), living as long as the code. A code is tried only
//   against the row that cookie names, so the same code from another browser finds nothing.
// - Attempts are reserved before the comparison with one conditional UPDATE (attempts < 5), so
//   concurrent guesses cannot exceed five; the fifth wrong one deletes the row, and the link with it.
// - Using the code deletes the row (link and code end together), as using the link does.
import { createHmac, randomBytes, randomInt } from "node:crypto";
import { db } from "../../db/client.server";
import { expireCookie, serializeCookie } from "../core/cookies.server";
import { constantTimeEqual } from "../core/crypto.server";
import { encodeJwt, tryDecodeJwt } from "../core/jwt.server";
import type { AuthRequest } from "../core/request.server";
import type { TokenPurpose, UsedRequest } from "./pending-request";
import { inEnglish, t } from "../../i18n/t.server";

/** Wrong codes a pending request survives; the fifth ends it. */
export const MAX_CODE_ATTEMPTS = 5;
const CODE_PATTERN = /^[0-9]{6}$/;
const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{32}$/;

export type IssuedCode = { code: string; requestId: string; codeHash: string; expires: Date };

function hmac(secret: string, requestId: string, code: string): string {
  return createHmac("sha256", secret).update(`email-code\n${requestId}\n${code}`).digest("hex");
}

/** A fresh code for a new request: the code to mail, the id to seal, the keyed hash to store. */
export function newEmailCode(secrets: readonly [string, ...string[]], maxAgeSeconds: number, now = new Date()): IssuedCode {
  const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
  const requestId = randomBytes(24).toString("base64url");
  return { code, requestId, codeHash: hmac(secrets[0], requestId, code), expires: new Date(now.getTime() + maxAgeSeconds * 1000) };
}

/** What the sealed cookie names: the request, what it is for, where a right code lands. */
export type PendingCode = { requestId: string; purpose: TokenPurpose; callbackUrl: string | null };

/** The Set-Cookie of the answer that sent the e-mail (a newer request replaces an older one). */
export async function emailCodeCookie(ar: AuthRequest, pending: PendingCode, expires: Date): Promise<string> {
  const maxAge = Math.max(1, Math.floor((expires.getTime() - Date.now()) / 1000));
  const payload = { rid: pending.requestId, p: pending.purpose, ...(pending.callbackUrl ? { cb: pending.callbackUrl } : {}) };
  const sealed = await encodeJwt({ payload, secrets: ar.config.secrets, salt: ar.names.emailCode, maxAge });
  return serializeCookie(ar.names.emailCode, sealed, { secure: ar.secure, maxAge });
}

export function clearEmailCodeCookie(ar: AuthRequest): string {
  return expireCookie(ar.names.emailCode, ar.secure);
}

/** The pending request this browser may finish with a code; null when absent, expired or forged. */
export async function readEmailCodeCookie(ar: AuthRequest): Promise<PendingCode | null> {
  const raw = ar.cookies.get(ar.names.emailCode);
  if (!raw || raw.length > 4096) return null;
  const payload = await tryDecodeJwt({ token: raw, secrets: ar.config.secrets, salt: ar.names.emailCode, clockTolerance: 0 });
  if (!payload) return null;
  const { rid, p, cb } = payload as { rid?: unknown; p?: unknown; cb?: unknown };
  if (typeof rid !== "string" || !REQUEST_ID_PATTERN.test(rid)) return null;
  if (p !== "signin" && p !== "signup" && p !== "reset") return null;
  return { requestId: rid, purpose: p, callbackUrl: typeof cb === "string" ? cb : null };
}

/** The address of the request the cookie names, while its code can still be used (for the reset form's policy check). */
export async function pendingCodeAddress(pending: PendingCode, now = new Date()): Promise<string | null> {
  const row = await db().verificationToken.findFirst({
    where: { requestId: pending.requestId, codeExpires: { gt: now }, expires: { gt: now }, codeAttempts: { lt: MAX_CODE_ATTEMPTS } },
    select: { identifier: true },
  });
  return row?.identifier ?? null;
}

export type CodeAttempt =
  | { result: "used"; request: UsedRequest }
  | { result: "wrong"; triesLeft: number; message: string }
  /** Nothing to enter a code for: no cookie, expired, used, ended by wrong codes, or another purpose. */
  | { result: "ended" };

/** Digits only: spaces and dashes people type between groups are dropped. */
export function typedCode(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const digits = value.replace(/[\s-]/g, "");
  return digits === "" ? null : digits.slice(0, 32);
}

/**
 * One typed code against the request this browser's cookie names. Right: the row is deleted
 * (link included) and its data returned. Wrong: counted; the fifth wrong deletes the row.
 */
export async function attemptEmailCode(
  ar: AuthRequest,
  typed: string,
  purposes: readonly TokenPurpose[],
  now = new Date(),
): Promise<CodeAttempt> {
  const pending = await readEmailCodeCookie(ar);
  if (!pending || !purposes.includes(pending.purpose)) return { result: "ended" };
  const client = db();
  const live = { requestId: pending.requestId, purpose: { in: [...purposes] }, codeExpires: { gt: now }, expires: { gt: now } };
  // Reserve the attempt first: of any number of concurrent guesses, at most five get one.
  const reserved = await client.verificationToken.updateMany({
    where: { ...live, codeAttempts: { lt: MAX_CODE_ATTEMPTS } },
    data: { codeAttempts: { increment: 1 } },
  });
  if (reserved.count !== 1) return { result: "ended" };
  const row = await client.verificationToken.findUnique({
    where: { requestId: pending.requestId },
    select: { identifier: true, purpose: true, codeHash: true, codeAttempts: true, passwordHash: true, name: true },
  });
  if (!row?.codeHash) return { result: "ended" };
  const right = CODE_PATTERN.test(typed) && ar.config.secrets.some((secret) => constantTimeEqual(hmac(secret, pending.requestId, typed), row.codeHash!));
  if (right) {
    const { count } = await client.verificationToken.deleteMany({ where: { requestId: pending.requestId, expires: { gt: now } } });
    if (count !== 1) return { result: "ended" };
    return {
      result: "used",
      request: { identifier: row.identifier, purpose: row.purpose as TokenPurpose, passwordHash: row.passwordHash, name: row.name, requestId: pending.requestId },
    };
  }
  const triesLeft = MAX_CODE_ATTEMPTS - row.codeAttempts;
  if (triesLeft <= 0) {
    await client.verificationToken.deleteMany({ where: { requestId: pending.requestId } });
    return { result: "ended" };
  }
  return { result: "wrong", triesLeft, message: t("emailCode.wrong", { triesLeft }) };
}

/**
 * A refused code's answer from inside the sign-in flow: 400 with the text, passed through the
 * flow as a Response; the page route recognises it (codeRefusal) and shows the form again.
 */
const refusals = new WeakMap<Response, { triesLeft: number | null; message: string }>();

/**
 * A refused code: JSON clients get `{error: "code", message, triesLeft}` with the English text
 * (JSON answers do not change with the language, contract section 17); the page shows the text
 * in the visitor's language.
 */
export function codeRefusedResponse(triesLeft: number | null, key: "emailCode.required" | "emailCode.wrong"): Response {
  const values = triesLeft === null ? undefined : { triesLeft };
  const message = t(key, values);
  const response = new Response(JSON.stringify({ error: "code", message: inEnglish(key, values), triesLeft }), {
    status: 400,
    headers: { "Content-Type": "application/json", "Cache-Control": "private, no-store" },
  });
  refusals.set(response, { triesLeft, message });
  return response;
}

export function codeRefusal(response: Response): { triesLeft: number | null; message: string } | null {
  return refusals.get(response) ?? null;
}
