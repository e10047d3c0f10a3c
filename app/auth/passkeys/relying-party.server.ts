// Who the relying party is, for every WebAuthn ceremony: the app's public origin as the rest of
// the app derives it (AUTH_URL; in development the request's origin, or the forwarded one with
// AUTH_TRUST_HOST) and that origin's host as the RP id. One origin, one RP id: an answer signed
// for any other is refused (ADR 041).
import type { AuthRequest } from "../core/request.server";

export type RelyingParty = { id: string; origin: string; name: string };

export function relyingParty(ar: AuthRequest): RelyingParty {
  // name: what authenticators show next to the account, the site's name (AUTH_SITE_NAME).
  return { id: new URL(ar.origin).hostname, origin: ar.origin, name: ar.config.siteName };
}
