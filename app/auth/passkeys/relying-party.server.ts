// Who the relying party is, for every WebAuthn ceremony: the app's public origin as the rest of
// the app derives it (AUTH_URL; in development the request's origin, or the forwarded one with
// AUTH_TRUST_HOST) and that origin's host as the RP id. One origin, one RP id: an answer signed
// for any other is refused (ADR 041).
import type { AuthRequest } from "../core/request.server";

/** The name authenticators show next to the account. */
export const RP_NAME = "Vestibule";

export type RelyingParty = { id: string; origin: string; name: string };

export function relyingParty(ar: AuthRequest): RelyingParty {
  return { id: new URL(ar.origin).hostname, origin: ar.origin, name: RP_NAME };
}
