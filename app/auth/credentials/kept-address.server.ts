// The address a visitor typed into the password form, kept across a refused sign-in so the
// sign-in page shows it again (WCAG 3.3.7: nothing already typed is asked for twice).
//
// It rides in a short-lived HttpOnly cookie that the sign-in page reads once and clears: of the
// two ways to carry it to the next page, a query parameter would leave the address in the
// browser's history, in proxy and server logs and in bookmarks; the cookie leaves it nowhere once
// the page showed it. The password is never kept, and JSON-mode callers (next-auth/react) hold
// what they sent, so they get no cookie.
import { expireCookie, serializeCookie, wellFormed } from "../core/cookies.server";
import { MAX_EMAIL_ADDRESS_LENGTH } from "../core/email-address";
import type { FlowContext } from "../signin/provider";
import type { AuthRequest } from "../core/request.server";

/** Seconds: enough to follow the redirect to the sign-in page, which clears it at once. */
export const KEPT_ADDRESS_MAX_AGE = 60;

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

/** A credentials callback's answer, plus the typed address when it sends the visitor back to the form. */
export function keepAddressOnRefusal(ctx: FlowContext, response: Response): Response {
  if (ctx.json || response.status !== 302) return response;
  const location = response.headers.get("Location");
  if (!location || new URL(location, ctx.ar.origin).searchParams.get("error") !== "CredentialsSignin") return response;
  const typed = ctx.body.email;
  if (typeof typed !== "string" || typed.trim() === "") return response;
  const headers = new Headers(response.headers);
  headers.append("Set-Cookie", serializeCookie(ctx.ar.names.signinEmail, keepable(typed), { secure: ctx.ar.secure, maxAge: KEPT_ADDRESS_MAX_AGE }));
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * For the sign-in page: the kept address (null when there is none or it is not one we could
 * have written), and the Set-Cookie that clears it whenever the request carried one.
 */
export function takeKeptAddress(ar: AuthRequest): { address: string | null; setCookie: string | null } {
  const name = ar.names.signinEmail;
  const value = ar.cookies.get(name);
  if (value === undefined) return { address: null, setCookie: null };
  const usable = value.trim() !== "" && value.length <= MAX_EMAIL_ADDRESS_LENGTH;
  return { address: usable ? value : null, setCookie: expireCookie(name, ar.secure) };
}
