// The device cookie: a sealed note that this browser has signed in
// to some accounts before. A credentials attempt that carries one for the address it names is
// counted only on that cookie's own budget (limits.server.ts). Sealed like the check cookies:
// a JWE under a key derived from the secret and the cookie name (ADR 035). Each account it names
// carries when it last signed in on this browser: after a "This wasn't me" report an account's
// notes older than the report are not recognised (ADR 081, 108), so the reported browser is a new
// device again.
import { randomBytes } from "node:crypto";
import { serializeCookie } from "./cookies.server";
import { sha256hex } from "./crypto.server";
import { encodeJwt } from "./jwt.server";
import { openSealedCookie, reportRefusedCookie } from "./sealed-cookies.server";

const DEVICE_COOKIE = "authjs.device";
/** One year, in seconds: both the cookie's Max-Age and the sealed value's `exp`. */
export const DEVICE_COOKIE_MAX_AGE = 365 * 24 * 60 * 60;
/** Accounts one device cookie remembers, most recent first; the oldest falls off. */
export const DEVICE_MAX_ACCOUNTS = 8;

const DEVICE_ID = /^[0-9a-f]{32}$/;
const ACCOUNT_DIGEST = /^[0-9a-f]{64}$/;

/** `__Host-` on https: Secure, Path=/ and no Domain, so no sibling host can plant one. */
export function deviceCookieName(secure: boolean): string {
  return secure ? `__Host-${DEVICE_COOKIE}` : DEVICE_COOKIE;
}

/**
 * The account as the device cookie names it: a digest of the normalised e-mail address, the only
 * thing a credentials attempt names before anything is looked up (so the check costs the same for
 * known and unknown accounts).
 */
export function deviceAccountDigest(normalizedAddress: string): string {
  return sha256hex(`device-account\n${normalizedAddress}`);
}

/** `signedInAt[i]`: when `accounts[i]` last signed in on this browser (ms since the epoch). */
export type Device = { deviceId: string; accounts: string[]; signedInAt: number[] };

type CookieContext = { cookies: Map<string, string>; secure: boolean; secrets: readonly string[] };

/** The device this request's cookie describes; null when absent, expired, forged or malformed. */
export async function readDevice({ cookies, secure, secrets }: CookieContext): Promise<Device | null> {
  const name = deviceCookieName(secure);
  const raw = cookies.get(name);
  if (!raw || raw.length > 4096) return null;
  // Sealed before AUTH_SECRET was rotated: sealed again for this answer (ADR 109).
  const opened = await openSealedCookie({ kind: "device", name, raw, secrets, secure, clockTolerance: 0 });
  if (!opened) return null;
  const { dev, acc, at, iat } = opened.payload as { dev?: unknown; acc?: unknown; at?: unknown; iat?: unknown };
  const valid =
    typeof dev === "string" &&
    DEVICE_ID.test(dev) &&
    Array.isArray(acc) &&
    acc.length <= DEVICE_MAX_ACCOUNTS &&
    acc.every((a): a is string => typeof a === "string" && ACCOUNT_DIGEST.test(a));
  if (!valid) {
    reportRefusedCookie("device", "invalid");
    return null;
  }
  // A cookie written before the times were kept: each account as of the cookie's own issue.
  const issued = typeof iat === "number" ? iat * 1000 : 0;
  const times = Array.isArray(at) && at.length === acc.length && at.every((n) => Number.isSafeInteger(n)) ? (at as number[]) : acc.map(() => issued);
  return { deviceId: dev, accounts: acc, signedInAt: times };
}

/**
 * The device id when the request carries a valid device cookie for this address, else null.
 * `notBefore` (the account's devicesResetAt): a note of the account written before it is not
 * recognised. A function is asked only when the cookie names the account (most requests carry no
 * such note, and need not look anything up).
 */
export async function deviceIdFor(
  ctx: CookieContext,
  normalizedAddress: string,
  notBefore: Date | null | (() => Promise<Date | null>) = null,
): Promise<string | null> {
  const device = await readDevice(ctx);
  if (!device) return null;
  const index = device.accounts.indexOf(deviceAccountDigest(normalizedAddress));
  if (index === -1) return null;
  const since = typeof notBefore === "function" ? await notBefore() : notBefore;
  if (since !== null && device.signedInAt[index]! < since.getTime()) return null;
  return device.deviceId;
}

/**
 * The Set-Cookie for a successful sign-in as `normalizedAddress`: the same device id when the
 * browser already has a valid cookie (its budget goes on), this account first, a fresh year.
 */
export async function issueDeviceCookie(ctx: CookieContext, normalizedAddress: string): Promise<string> {
  const name = deviceCookieName(ctx.secure);
  const device = await readDevice(ctx);
  const account = deviceAccountDigest(normalizedAddress);
  const others = (device?.accounts ?? []).map((a, i) => ({ a, at: device!.signedInAt[i]! })).filter((e) => e.a !== account);
  const kept = [{ a: account, at: Date.now() }, ...others].slice(0, DEVICE_MAX_ACCOUNTS);
  const deviceId = device?.deviceId ?? randomBytes(16).toString("hex");
  const payload = { dev: deviceId, acc: kept.map((e) => e.a), at: kept.map((e) => e.at) };
  const sealed = await encodeJwt({ payload, secrets: ctx.secrets, salt: name, maxAge: DEVICE_COOKIE_MAX_AGE });
  return serializeCookie(name, sealed, { secure: ctx.secure, maxAge: DEVICE_COOKIE_MAX_AGE });
}
