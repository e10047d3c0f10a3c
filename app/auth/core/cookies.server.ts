// Cookie names, attributes and chunking. Every Set-Cookie the auth core writes is
// built here so the attributes stay identical everywhere.

export const COOKIE_KEYS = ["sessionToken", "csrfToken", "callbackUrl", "state", "pkceCodeVerifier", "nonce", "challenge", "signinEmail", "twoFactor", "emailCode", "samlBinding"] as const;
export type CookieKey = (typeof COOKIE_KEYS)[number];
export type CookieNames = Record<CookieKey, string>;

const BASE_NAMES: CookieNames = {
  sessionToken: "authjs.session-token",
  csrfToken: "authjs.csrf-token",
  callbackUrl: "authjs.callback-url",
  state: "authjs.state",
  pkceCodeVerifier: "authjs.pkce.code_verifier",
  nonce: "authjs.nonce",
  // The sealed WebAuthn challenges this browser was given (passkeys/challenge.server.ts).
  challenge: "authjs.challenge",
  // The address typed into a refused form or the sign-in page's first step (signin/kept-address.server.ts, ADR 087).
  signinEmail: "authjs.signin-email",
  // The sealed pending sign-in awaiting its second factor (app/auth/two-factor).
  twoFactor: "authjs.two-factor",
  // The pending e-mail sign-in, sign-up or reset a typed code may finish (email/email-code.server.ts).
  emailCode: "authjs.email-code",
  // The random value binding a SAML sign-in to the browser that started it (saml/sp.server.ts, ADR 154, amended).
  samlBinding: "authjs.saml-binding",
};

/**
 * The visitor's chosen language: not an auth cookie, so no prefix and no
 * __Secure- variant, readable by nothing but the server (HttpOnly) and the same on http and https.
 */
export const LANGUAGE_COOKIE = "lang";

/** A whole Set-Cookie string may not exceed this many bytes before it is split. */
export const MAX_COOKIE_SIZE = 4096;
/** Characters of value per chunk (Auth.js's 4096 minus its estimated attribute overhead). */
export const CHUNK_SIZE = 3933;

/** Cookies no sibling host may plant: `__Host-` on https. */
const HOST_PREFIXED = new Set<CookieKey>(["csrfToken", "emailCode", "samlBinding"]);

const SECURE_NAMES: CookieNames = Object.fromEntries(
  COOKIE_KEYS.map((k) => [k, `${HOST_PREFIXED.has(k) ? "__Host-" : "__Secure-"}${BASE_NAMES[k]}`]),
) as CookieNames;

export function cookieNames(secure: boolean): CookieNames {
  return secure ? SECURE_NAMES : BASE_NAMES;
}

export type CookieOptions = {
  secure: boolean;
  /** Seconds; omitted → a browser-session cookie unless `expires` is given. */
  maxAge?: number;
  expires?: Date;
  sameSite?: "Lax" | "None";
};

/**
 * Parses a Cookie header; values are URI-decoded. A name sent more than once is absent: a sibling
 * subdomain can set a cookie of one of our names for the parent domain, which the browser sends
 * beside ours (the longer Path first), so neither copy can be trusted to be the one we wrote — and
 * reading either would let the planted one pick the session, OAuth state or CSRF token we use.
 * Our own cookies are all host-only with Path=/, so a browser never holds two of one name.
 */
export function parseCookieHeader(header: string | null): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  // Made only when a name comes twice (rare), not for every request's cookies.
  let duplicated: Set<string> | undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!name || duplicated?.has(name)) continue;
    if (out.has(name)) {
      out.delete(name);
      (duplicated ??= new Set()).add(name);
      continue;
    }
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (value.includes("%")) {
      try {
        value = decodeURIComponent(value);
      } catch {
        // A malformed escape is kept as sent; whoever reads it validates the value.
      }
    }
    out.set(name, value);
  }
  return out;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `value` with every lone surrogate (half of a UTF-16 pair, e.g. from a JSON body's "\ud800" or a
 * cut made in the middle of a pair) replaced by U+FFFD: what String#toWellFormed does, and what
 * UTF-8 can encode at all.
 */
export function wellFormed(value: string): string {
  return value.replace(LONE_SURROGATE, "\ufffd");
}

/** Never throws: a lone surrogate (which encodeURIComponent refuses) is written as U+FFFD. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(wellFormed(value))}`];
  if (options.maxAge !== undefined) parts.push(`Max-Age=${Math.floor(options.maxAge)}`);
  parts.push("Path=/");
  if (options.expires) parts.push(`Expires=${options.expires.toUTCString()}`);
  parts.push("HttpOnly");
  // SameSite=None is only honoured on Secure cookies.
  if (options.secure || options.sameSite === "None") parts.push("Secure");
  parts.push(`SameSite=${options.sameSite ?? "Lax"}`);
  return parts.join("; ");
}

export function expireCookie(name: string, secure: boolean): string {
  return serializeCookie(name, "", { secure, maxAge: 0, expires: new Date(0) });
}

const chunkIndex = (base: string, name: string): number | null => {
  if (!name.startsWith(base + ".")) return null;
  const rest = name.slice(base.length + 1);
  return /^(0|[1-9]\d{0,3})$/.test(rest) ? Number(rest) : null;
};

/** The names in the request that belong to `base`: the plain cookie and its numbered chunks. */
export function chunkNames(cookies: Map<string, string>, base: string): string[] {
  return [...cookies.keys()].filter((n) => n === base || chunkIndex(base, n) !== null);
}

/**
 * Joins `<base>.0`, `<base>.1`, … in order, or returns the plain cookie. Null when absent, gappy,
 * or when both a plain cookie and a first chunk came: writeChunkedCookie expires the plain cookie
 * when it splits and the chunks when it does not, so one of the two was planted by someone else.
 */
export function readChunkedCookie(cookies: Map<string, string>, base: string): string | null {
  const plain = cookies.get(base) || null;
  if (!cookies.get(`${base}.0`)) return plain;
  if (plain !== null) return null;
  const chunks: [number, string][] = [];
  for (const [name, value] of cookies) {
    const i = chunkIndex(base, name);
    if (i !== null && value) chunks.push([i, value]);
  }
  chunks.sort((a, b) => a[0] - b[0]);
  // A missing piece means the value is truncated: treat it as absent rather than decode garbage.
  if (chunks.some(([i], pos) => i !== pos)) return null;
  return chunks.map(([, v]) => v).join("");
}

/**
 * Writes `value` under `base`, split into `<base>.N` pieces when one cookie would exceed
 * MAX_COOKIE_SIZE, and expires every chunk or plain cookie of `base` the request carried that
 * the new value no longer uses.
 */
export function writeChunkedCookie(
  cookies: Map<string, string>,
  base: string,
  value: string,
  options: CookieOptions,
): string[] {
  const whole = serializeCookie(base, value, options);
  const written = new Map<string, string>();
  if (Buffer.byteLength(whole) <= MAX_COOKIE_SIZE) {
    written.set(base, whole);
  } else {
    // Split by code point so no character is cut in half.
    const pieces: string[] = [];
    let current = "";
    for (let i = 0; i < value.length; ) {
      const cp = value.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      if (current.length + ch.length > CHUNK_SIZE) {
        pieces.push(current);
        current = "";
      }
      current += ch;
      i += ch.length;
    }
    if (current) pieces.push(current);
    pieces.forEach((piece, i) => written.set(`${base}.${i}`, serializeCookie(`${base}.${i}`, piece, options)));
  }
  const stale = chunkNames(cookies, base).filter((n) => !written.has(n));
  return [...stale.map((n) => expireCookie(n, options.secure)), ...written.values()];
}

/** Expires the plain cookie and every chunk of `base` the request carried (or just the plain name). */
export function clearChunkedCookie(cookies: Map<string, string>, base: string, secure: boolean): string[] {
  const names = chunkNames(cookies, base);
  return (names.length ? names : [base]).map((n) => expireCookie(n, secure));
}
