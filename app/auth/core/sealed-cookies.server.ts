// Opening the sealed cookies (the jwt session, the device cookie, the pending second factor, the
// e-mail code, the WebAuthn challenge, the OAuth checks: JWEs under keys derived from AUTH_SECRET
// and the cookie's name, jwt.server.ts). AUTH_SECRET is a comma list: the first value seals, every
// value opens (ADR 109).
// - A cookie only a later value opens was sealed before the secret was rotated: it is sealed again
//   with the first value, the same claims and expiry (resealJwt), and the answer to this request
//   carries it — unless the answer sets that cookie itself (a sign-in, a consumed challenge).
//   Once every browser that matters came back, the old value can be dropped and nobody is
//   signed out.
// - A cookie no value opens, or one that opens but is not what we seal, is refused as ever, and
//   now counted (vestibule_cookies_refused_total by cookie and reason) and logged: one warn line
//   per cookie and reason a minute (with how many were not logged since), never the value, so a
//   flood of forged cookies cannot fill the log.
import { serializeCookie } from "./cookies.server";
import { openJwt, resealJwt, type Opened, type RefusalReason } from "./jwt.server";
import { log } from "./log.server";
import { countCookieRefused } from "./metrics.server";
import { firstRefusalOnRequest, holdAnswerCookies, takeHeldCookies } from "./request-context.server";
import { copyResponse } from "./respond.server";

/** The sealed cookies, as the metric's `cookie` label and the log line name them. */
export type SealedCookieKind = "session" | "device" | "two-factor" | "email-code" | "passkey-challenge" | "oauth-check";

export type SealedCookie = {
  kind: SealedCookieKind;
  name: string;
  raw: string;
  secrets: readonly string[];
  secure: boolean;
  clockTolerance?: number;
  now?: Date;
  remember?: boolean;
  /**
   * false: the caller re-seals it itself — a cookie every read of which is followed by a write of
   * it on the same request, or one with attributes of its own (the chunked session cookie).
   */
  reseal?: boolean;
};

/**
 * The claims of a sealed cookie, and which secret opened it (keyIndex > 0: stale); null when
 * refused (counted and logged). With `reseal` (the default) a stale one is sealed again for the
 * answer: Path=/, HttpOnly, SameSite=Lax, Secure on https, expiring when its `exp` says.
 */
export async function openSealedCookie(c: SealedCookie): Promise<Opened | null> {
  const opened = await openJwt({ token: c.raw, secrets: c.secrets, salt: c.name, clockTolerance: c.clockTolerance, now: c.now, remember: c.remember });
  if ("refused" in opened) {
    reportRefusedCookie(c.kind, opened.refused);
    return null;
  }
  if (opened.keyIndex > 0 && c.reseal !== false && typeof opened.payload.exp === "number") {
    const token = await resealJwt({ payload: opened.payload, secrets: c.secrets, salt: c.name });
    const seconds = Math.floor((c.now ?? new Date()).getTime() / 1000);
    const expires = new Date(opened.payload.exp * 1000);
    resealLater(c.name, [serializeCookie(c.name, token, { secure: c.secure, maxAge: Math.max(1, opened.payload.exp - seconds), expires })]);
  }
  return opened;
}

/**
 * Holds `setCookies` (the re-sealed `name`, possibly in chunks) for the answer to the request being
 * served — kept in the request's context, since the strategies read the cookies from requests of
 * their own making.
 */
export function resealLater(name: string, setCookies: string[]): void {
  holdAnswerCookies(name, setCookies);
}

/**
 * The answer with the request's held cookies added (the root middleware, for every answer React
 * Router gives): the re-sealed ones (ADR 109) and the session cookie a read re-issued (ADR 118). A
 * cookie the answer already sets — by its name or a chunk of it — is left as the answer has it:
 * that is newer (a sign-in's, a rewrite's, a clearing).
 */
export function withHeldCookies(response: Response): Response {
  const held = takeHeldCookies();
  if (held.length === 0) return response;
  const already = response.headers.getSetCookie().map((h) => h.slice(0, h.indexOf("=")));
  const extra = held.filter((r) => !already.some((n) => n === r.name || n.startsWith(`${r.name}.`))).flatMap((r) => r.setCookies);
  if (extra.length === 0) return response;
  try {
    for (const c of extra) response.headers.append("Set-Cookie", c);
    return response;
  } catch {
    const copy = copyResponse(response);
    for (const c of extra) copy.headers.append("Set-Cookie", c);
    return copy;
  }
}

/** A minute between two log lines for one cookie and reason. */
const LOG_EVERY_MS = 60_000;
const lastLogged = new Map<string, { at: number; notLogged: number }>();

/**
 * Counts a refused sealed cookie and logs it, at most once a minute per cookie and reason (the
 * kinds and reasons are fixed lists, so this table stays small), and once per request and kind.
 * Also for a cookie that opened but whose claims its reader refuses (`invalid`).
 */
export function reportRefusedCookie(kind: SealedCookieKind, reason: RefusalReason): void {
  // One request reads its session cookie more than once (the layout, the page, the gate): the
  // browser sent one refused cookie, counted once.
  if (!firstRefusalOnRequest(kind)) return;
  countCookieRefused(kind, reason);
  const key = `${kind} ${reason}`;
  const now = Date.now();
  const held = lastLogged.get(key);
  if (held && now - held.at < LOG_EVERY_MS) {
    held.notLogged++;
    return;
  }
  // `kind`, not `cookie`: the log scrubs any field named cookie (log.server.ts).
  log("warn", "cookie-refused", { kind, reason, ...(held?.notLogged ? { notLoggedSince: held.notLogged } : {}) });
  lastLogged.set(key, { at: now, notLogged: 0 });
}

/** Tests: the next refusal of every kind is logged again. */
export function resetRefusedCookieLog(): void {
  lastLogged.clear();
}
