// The address a visitor typed into the password or e-mail form, kept across a refused sign-in so
// the sign-in page shows it again (WCAG 3.3.7: nothing already typed is asked for twice); and the
// address typed in the sign-in page's first step, carried to its second step (ADR 087).
//
// It rides in a short-lived HttpOnly cookie that the sign-in page reads once and clears: of the
// two ways to carry it to the next page, a query parameter would leave the address in the
// browser's history, in proxy and server logs and in bookmarks; the cookie leaves it nowhere once
// the page showed it. The password is never kept, and JSON-mode callers (next-auth/react) hold
// what they sent, so they get no cookie.
import { expireCookie, serializeCookie, wellFormed } from "../core/cookies.server";
import { MAX_EMAIL_ADDRESS_LENGTH } from "../core/email-address";
import type { FlowContext } from "./provider";
import type { AuthRequest } from "../core/request.server";

/** Seconds: enough to follow the redirect to the sign-in page, which clears it at once. */
export const KEPT_ADDRESS_MAX_AGE = 60;

/**
 * Seconds the address typed in the sign-in page's first step stays for its second step (ADR 087):
 * long enough to reload the second step or come back to it, short enough that a shared computer
 * forgets it soon. A successful password sign-in and a fresh visit to the page clear it earlier.
 */
export const SIGNIN_STEP_MAX_AGE = 600;

/**
 * What is kept of the typed text: well-formed (a JSON body can carry a lone surrogate) and at most
 * MAX_EMAIL_ADDRESS_LENGTH UTF-16 units, cut between characters, never inside a surrogate pair.
 */
export function keepable(typed: string): string {
  let kept = "";
  for (const ch of wellFormed(typed)) {
    if (kept.length + ch.length > MAX_EMAIL_ADDRESS_LENGTH) break;
    kept += ch;
  }
  return kept;
}

/** The Set-Cookie that keeps `typed` (cut by keepable) for `maxAge` seconds. */
export function keepAddressCookie(ar: AuthRequest, typed: string, maxAge: number): string {
  return serializeCookie(ar.names.signinEmail, keepable(typed), { secure: ar.secure, maxAge });
}

/** Refusals that send a form with a typed address (the password's, the e-mail link's) back to the sign-in page. */
const KEPT_ON = new Set(["CredentialsSignin", "RateLimited", "EmailSignin"]);

/**
 * A sign-in endpoint's answer, plus the typed address when it sends the visitor back to the
 * sign-in form (a wrong password, a limit, an e-mail that could not be sent); after a password
 * sign-in that went on (signed in, or on to the second factor) a kept address the request carried
 * is cleared, so a shared computer does not offer it to the next person.
 */
export function keepAddressOnRefusal(ctx: FlowContext, response: Response): Response {
  if (ctx.json || response.status !== 302) return response;
  const location = response.headers.get("Location");
  if (location === null) return response;
  const target = new URL(location, ctx.ar.origin);
  const error = target.searchParams.get("error");
  const toSigninPage = target.pathname === `${ctx.ar.config.basePath}/signin`;
  const typed = ctx.body.email;
  let setCookie: string | null = null;
  if (toSigninPage && error !== null && KEPT_ON.has(error) && typeof typed === "string" && typed.trim() !== "") {
    setCookie = keepAddressCookie(ctx.ar, typed, KEPT_ADDRESS_MAX_AGE);
  } else if (error === null && ctx.providerType === "credentials" && ctx.ar.cookies.has(ctx.ar.names.signinEmail)) {
    setCookie = expireCookie(ctx.ar.names.signinEmail, ctx.ar.secure);
  }
  if (setCookie === null) return response;
  const headers = new Headers(response.headers);
  headers.append("Set-Cookie", setCookie);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * For the sign-in page: the kept address (null when there is none or it is not one we could
 * have written), and the Set-Cookie that clears it whenever the request carried one — unless
 * `keep` (the page's second step, which a reload must be able to show again).
 */
export function takeKeptAddress(ar: AuthRequest, { keep = false } = {}): { address: string | null; setCookie: string | null } {
  const name = ar.names.signinEmail;
  const value = ar.cookies.get(name);
  if (value === undefined) return { address: null, setCookie: null };
  const usable = value.trim() !== "" && value.length <= MAX_EMAIL_ADDRESS_LENGTH;
  return { address: usable ? value : null, setCookie: keep && usable ? null : expireCookie(name, ar.secure) };
}
