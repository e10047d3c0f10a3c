// TOTP (RFC 6238) with otpauth (ADR 044): SHA-1, 6 digits, 30-second steps — what every
// authenticator app reads from an otpauth URI. A code is checked against the step before, the
// current one and the one after (±1 step of clock drift), each comparison in constant time and all
// three always made, so the answer's timing says nothing about which step matched.
import { HOTP, Secret, TOTP } from "otpauth";
import { encode } from "uqr";
import { getConfig } from "../core/config.server";
import { constantTimeEqual } from "../core/crypto.server";

export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
/** Steps of drift accepted either side of now. */
export const TOTP_WINDOW = 1;
const TOTP_CODE = /^[0-9]{6}$/;

/** A fresh 160-bit secret (RFC 4226's recommended length), base32 as apps take it. */
export function generateTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function isTotpCode(code: string): boolean {
  return TOTP_CODE.test(code);
}

/** The time step `at` falls in. */
export function totpStep(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD);
}

/** The code of one time step (tests compute codes with it, as an authenticator app would). */
export function totpCodeAt(secretBase32: string, step: number): string {
  return HOTP.generate({ secret: Secret.fromBase32(secretBase32), algorithm: "SHA1", digits: TOTP_DIGITS, counter: step });
}

/** The time step whose code `code` is, within ±TOTP_WINDOW of `now`; null when none. */
export function matchTotpStep(secretBase32: string, code: string, now: Date): number | null {
  if (!isTotpCode(code)) return null;
  const current = totpStep(now);
  let matched: number | null = null;
  for (let delta = -TOTP_WINDOW; delta <= TOTP_WINDOW; delta++) {
    const step = current + delta;
    if (constantTimeEqual(totpCodeAt(secretBase32, step), code)) matched = step;
  }
  return matched;
}

/** The otpauth:// URI an authenticator app scans: issuer, the account's e-mail, the secret. */
export function otpauthUri(secretBase32: string, accountName: string): string {
  return new TOTP({
    // The issuer an authenticator app shows beside the account: the site's name (AUTH_SITE_NAME).
    issuer: getConfig().siteName,
    label: accountName,
    algorithm: "SHA1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    secret: Secret.fromBase32(secretBase32),
  }).toString();
}

/**
 * The QR code of `text` as an SVG path over a square of `size` modules (quiet zone included):
 * the server renders it inline, so enrolment works without JavaScript and without an image URL.
 */
export function qrCodePath(text: string): { size: number; path: string } {
  const { size, data } = encode(text, { ecc: "M", border: 4 });
  let path = "";
  data.forEach((row, y) => row.forEach((dark, x) => (dark ? (path += `M${x} ${y}h1v1h-1z`) : null)));
  return { size, path };
}
