// E-mailed codes: every e-mail that carries a sign-in, sign-up or reset link
// also carries a 6-digit code for the same pending request (the same VerificationToken row), typed
// in the browser that asked. docs/decisions/047-email-code-binding.md.
//
// - The code comes from crypto.randomInt; the row keeps only HMAC-SHA256(secret, requestId + code):
//   six digits are a million values, which a plain hash of a leaked table would give away at once.
// - The answer that sent the e-mail sets authjs.email-code: a JWE naming the row's random
//   requestId (never the code or the address), and this browser's last few earlier ones (ADR 062),
//   living as long as the newest code. With AUTH_EMAIL_CODE=false a sign-up still sets it, naming
//   its request without a code for as long as the link lives: it is what lets the sign-up link
//   finish in the browser that signed up without asking for the password again (ADR 061). A code is tried only against the rows that cookie names, so
//   the same code from another browser finds nothing.
// - Wrong codes count against the address's budget (EMAIL_CODE_ADDRESS, failures only) and each
//   request's five tries, reserved before the comparison with one conditional UPDATE (attempts < 5),
//   so concurrent guesses cannot exceed five; the fifth wrong one deletes the row and its link.
//   The budget never stops a code being compared (prove, then judge, ADR 103): once it is spent a
//   request's next try is its last, so a right code is accepted and a wrong one ends the request.
// - Using the code deletes the row (link and code end together), as using the link does, and the
//   other requests the cookie names end with it. The reset form proves the code first and uses it
//   only once the new password is accepted (proveEmailCode, ADR 103).
import { createHmac, randomBytes, randomInt } from "node:crypto";
import { db } from "../../db/client.server";
import { expireCookie, serializeCookie } from "../core/cookies.server";
import { constantTimeEqual } from "../core/crypto.server";
import { countEmailCodeGuess, type LimitRefusal } from "../core/limits.server";
import { encodeJwt } from "../core/jwt.server";
import { openSealedCookie } from "../core/sealed-cookies.server";
import type { AuthRequest } from "../core/request.server";
import { slot } from "../core/slot";
import { asciiDigits } from "../core/typed-code";
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

/** A pending request's random id: what the authjs.email-code cookie names (never the code or the address). */
export function newRequestId(): string {
  return randomBytes(24).toString("base64url");
}

/** A fresh code for a new request: the code to mail, the id to seal, the keyed hash to store. */
export function newEmailCode(secrets: readonly [string, ...string[]], maxAgeSeconds: number, now = new Date()): IssuedCode {
  const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
  const requestId = newRequestId();
  return { code, requestId, codeHash: hmac(secrets[0], requestId, code), expires: new Date(now.getTime() + maxAgeSeconds * 1000) };
}

/**
 * What the sealed cookie names: the request, what it is for, where a right code lands, and for a
 * re-authentication the session it was asked in (ADR 080).
 */
export type PendingCode = { requestId: string; purpose: TokenPurpose; callbackUrl: string | null; session?: string | null };

/**
 * How many of this browser's latest requests the cookie names (ADR 062): the code of an e-mail
 * that arrived before the "send again" one still works. Bounded so that the sealed cookie stays
 * far below 4 KB whatever the callback URLs are.
 */
export const MAX_LIVE_CODES = 3;
const MAX_PAYLOAD_CHARS = 2400;

type Entry = { rid: string; p: TokenPurpose; cb?: string; s?: string };
const entryOf = (pending: PendingCode): Entry => ({
  rid: pending.requestId,
  p: pending.purpose,
  ...(pending.callbackUrl ? { cb: pending.callbackUrl } : {}),
  ...(pending.session ? { s: pending.session } : {}),
});

/**
 * The Set-Cookie of the answer that sent the e-mail: the new request first, then this browser's
 * earlier ones still named (at most MAX_LIVE_CODES in all). Its lifetime is the newest code's.
 */
export async function emailCodeCookie(ar: AuthRequest, pending: PendingCode, expires: Date): Promise<string> {
  const maxAge = Math.max(1, Math.floor((expires.getTime() - Date.now()) / 1000));
  const earlier = (await readEmailCodeCookie(ar)).filter((p) => p.requestId !== pending.requestId);
  const entries = [pending, ...earlier].slice(0, MAX_LIVE_CODES).map(entryOf);
  while (entries.length > 1 && JSON.stringify(entries).length > MAX_PAYLOAD_CHARS) entries.pop();
  const sealed = await encodeJwt({ payload: { r: entries }, secrets: ar.config.secrets, salt: ar.names.emailCode, maxAge });
  return serializeCookie(ar.names.emailCode, sealed, { secure: ar.secure, maxAge });
}

export function clearEmailCodeCookie(ar: AuthRequest): string {
  return expireCookie(ar.names.emailCode, ar.secure);
}

function pendingOf(value: unknown): PendingCode | null {
  const { rid, p, cb, s } = (value ?? {}) as { rid?: unknown; p?: unknown; cb?: unknown; s?: unknown };
  if (typeof rid !== "string" || !REQUEST_ID_PATTERN.test(rid)) return null;
  if (p !== "signin" && p !== "signup" && p !== "reset" && p !== "reauth") return null;
  return { requestId: rid, purpose: p, callbackUrl: typeof cb === "string" ? cb : null, session: typeof s === "string" ? s : null };
}

/** The pending requests this browser may finish with a code, newest first; empty when absent, expired or forged. */
export async function readEmailCodeCookie(ar: AuthRequest): Promise<PendingCode[]> {
  const raw = ar.cookies.get(ar.names.emailCode);
  if (!raw || raw.length > 4096) return [];
  // Sealed before AUTH_SECRET was rotated: sealed again for this answer (ADR 109).
  const opened = await openSealedCookie({
    kind: "email-code",
    name: ar.names.emailCode,
    raw,
    secrets: ar.config.secrets,
    secure: ar.secure,
    clockTolerance: 0,
  });
  const list = opened?.payload.r;
  if (!Array.isArray(list)) return [];
  return list
    .slice(0, MAX_LIVE_CODES)
    .map(pendingOf)
    .filter((p): p is PendingCode => p !== null);
}

/** Whether this browser asked for the request `requestId` (its code cookie names it). */
export async function browserAskedFor(ar: AuthRequest, requestId: string | null): Promise<boolean> {
  if (requestId === null) return false;
  return (await readEmailCodeCookie(ar)).some((p) => p.requestId === requestId);
}

const liveWhere = (requestIds: string[], purposes: readonly TokenPurpose[], now: Date) => ({
  requestId: { in: requestIds },
  purpose: { in: [...purposes] },
  codeExpires: { gt: now },
  expires: { gt: now },
  codeAttempts: { lt: MAX_CODE_ATTEMPTS },
});

/**
 * The address of this browser's pending request (the one it typed), while the request lives: the
 * check-your-e-mail page names it. Every request is stored, for an address with an account or
 * not, so the page reads the same for both; null once it was used, ended or expired.
 */
export async function pendingRequestAddress(pending: PendingCode, now = new Date()): Promise<string | null> {
  const row = await db().verificationToken.findFirst({ where: liveWhere([pending.requestId], [pending.purpose], now), select: { identifier: true } });
  return row?.identifier ?? null;
}

export type CodeAttempt =
  | { result: "used"; request: UsedRequest }
  | { result: "wrong"; triesLeft: number; message: string }
  /** A wrong code on a request whose address's budget of wrong codes (EMAIL_CODE_ADDRESS) is spent: the request is ended. */
  | { result: "limited"; refusal: LimitRefusal }
  /** Nothing to enter a code for: no cookie, expired, used, ended by wrong codes, or another purpose. */
  | { result: "ended" };

/** Digits only (of any script, read as ASCII): spaces and dashes people type between groups are dropped. */
export function typedCode(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const digits = asciiDigits(value).replace(/[\s-]/g, "");
  return digits === "" ? null : digits.slice(0, 32);
}

/**
 * A code proved right but not yet used (the reset form, ADR 103): the new password is judged only
 * now, against the proved account. `use` ends the request (and the others the cookie names) as a
 * right code does; `refuse` keeps it for another try unless this was its last (the try the proof
 * took stays counted: a refused password costs one of the request's five).
 */
export type ProvedCode = {
  result: "proved";
  request: UsedRequest;
  /** True when this call used the request (false: ended meanwhile). */
  use: () => Promise<boolean>;
  /** The password was refused: false when that was the request's last try (it is ended). */
  refuse: () => Promise<boolean>;
};

/**
 * One typed code against the live requests this browser's cookie names for `purposes` (its last
 * few: ADR 062). The guess is counted on the addresses' budgets of wrong codes, a try reserved on
 * each request (its last once its address's budget is spent); the code is compared with every
 * request that granted one. Right: that request is used, and every
 * other request the cookie names ends with it (link included). Wrong: counted on each; a request
 * at its fifth wrong code is deleted.
 */
export async function attemptEmailCode(
  ar: AuthRequest,
  typed: string,
  purposes: readonly TokenPurpose[],
  now = new Date(),
  /** Which of the named requests may take this code (a re-authentication: those of its session). */
  accept: (pending: PendingCode) => boolean = () => true,
): Promise<CodeAttempt> {
  const proof = await proveEmailCode(ar, typed, purposes, now, accept);
  if (proof.result !== "proved") return proof;
  return (await proof.use()) ? { result: "used", request: proof.request } : { result: "ended" };
}

/**
 * attemptEmailCode without using a right code: the caller judges what came with it first, then
 * `use`s or `refuse`s it (ProvedCode). Wrong codes are counted and end requests exactly as there.
 */
export async function proveEmailCode(
  ar: AuthRequest,
  typed: string,
  purposes: readonly TokenPurpose[],
  now = new Date(),
  accept: (pending: PendingCode) => boolean = () => true,
): Promise<Exclude<CodeAttempt, { result: "used" }> | ProvedCode> {
  const named = await readEmailCodeCookie(ar);
  const ids = named.filter((p) => purposes.includes(p.purpose) && accept(p)).map((p) => p.requestId);
  if (ids.length === 0) return { result: "ended" };
  const client = db();
  const live = await client.verificationToken.findMany({ where: liveWhere(ids, purposes, now), select: { requestId: true, identifier: true } });
  if (live.length === 0) return { result: "ended" };
  // Prove, then judge (ADR 103): the guess is counted on each address's budget of wrong codes
  // first, but never refused for it. A request whose address's budget this guess went past gets
  // this try as its last (its tries all taken at once): a right code is still accepted, a wrong
  // one ends it. So an outsider who spends the budget does not block the owner's right code, and
  // the guesses at an address stay bounded: EMAIL_CODE_ADDRESS, then one per request.
  const budget = await countEmailCodeGuess(ar.config.rateLimits, live.map((r) => r.identifier));

  // Reserve a try on each request first: of any number of concurrent guesses, at most five are
  // compared with any one code (and one, once its address's budget is spent).
  const reserved: string[] = [];
  for (const { requestId, identifier } of live) {
    const last = budget.spent.has(identifier);
    const { count } = await client.verificationToken.updateMany({
      where: { ...liveWhere([requestId!], purposes, now) },
      data: { codeAttempts: last ? MAX_CODE_ATTEMPTS : { increment: 1 } },
    });
    if (count === 1) reserved.push(requestId!);
  }
  if (reserved.length === 0) {
    await budget.refund();
    return { result: "ended" };
  }
  const rows = await client.verificationToken.findMany({
    where: { requestId: { in: reserved } },
    select: { requestId: true, identifier: true, purpose: true, codeHash: true, codeAttempts: true, passwordHash: true, name: true },
  });
  const wellFormed = CODE_PATTERN.test(typed);
  // Every row is compared (no early exit), each in constant time.
  const matches = rows.map((row) => wellFormed && row.codeHash !== null && ar.config.secrets.some((secret) => constantTimeEqual(hmac(secret, row.requestId!, typed), row.codeHash!)));
  const right = rows.find((_, i) => matches[i]);
  if (right) {
    // Only its own address's count is taken back: for the other requests named (another address's
    // in the same cookie) it was a guess like any other.
    await budget.refund(right.identifier);
    return {
      result: "proved",
      request: { identifier: right.identifier, purpose: right.purpose as TokenPurpose, passwordHash: right.passwordHash, name: right.name, requestId: right.requestId },
      use: async () => {
        const { count } = await client.verificationToken.deleteMany({ where: { requestId: right.requestId, expires: { gt: now } } });
        if (count !== 1) return false;
        // One sign-in: the other requests this browser holds end with it.
        await client.verificationToken.deleteMany({ where: { requestId: { in: named.map((p) => p.requestId) } } });
        return true;
      },
      refuse: async () => {
        if (right.codeAttempts < MAX_CODE_ATTEMPTS) return true;
        await client.verificationToken.deleteMany({ where: { requestId: right.requestId } });
        return false;
      },
    };
  }
  const spent = rows.filter((row) => row.codeAttempts >= MAX_CODE_ATTEMPTS).map((row) => row.requestId!);
  if (spent.length > 0) await client.verificationToken.deleteMany({ where: { requestId: { in: spent } } });
  const triesLeft = Math.max(0, ...rows.map((row) => MAX_CODE_ATTEMPTS - row.codeAttempts));
  if (triesLeft <= 0) {
    // Ended by the address's spent budget rather than by its own five: said as the limit it met.
    const limited = rows.find((row) => budget.spent.has(row.identifier));
    return limited ? { result: "limited", refusal: budget.refusal(limited.identifier) } : { result: "ended" };
  }
  return { result: "wrong", triesLeft, message: t("emailCode.wrong", { triesLeft }) };
}

/**
 * A refused code's answer from inside the sign-in flow: 400 with the text, passed through the
 * flow as a Response; the page route recognises it (codeRefusal) and shows the form again.
 */
const refusals = slot<Response, { triesLeft: number | null; message: string }>("codeRefusal");

/**
 * A refused code: JSON clients get `{error: "code", message, triesLeft}` with the English text
 * (JSON answers do not change with the language); the page shows the text
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
