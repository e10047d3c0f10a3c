// Which POSTs come from another site (docs/decisions/037-csp-and-origin.md).
// Browsers name the page a form or fetch was sent from in `Origin`; when it is there and is not
// the app's origin, the POST is refused whatever CSRF token it carries. `Origin: null` (a
// sandboxed frame, a data: URL, a POST after a cross-site redirect) names no origin of ours and
// is refused too, and so is a POST whose `Sec-Fetch-Site` is `cross-site`. A request with neither
// (curl, an older client) is left to the CSRF token alone.
import type { AuthRequest } from "./request.server";

export function isCrossOriginPost(ar: AuthRequest): boolean {
  if (ar.request.method.toUpperCase() !== "POST") return false;
  // The browser's own word that the page that sent it is on another site (Fetch Metadata), for a
  // POST whose Origin was dropped on the way (ADR 118).
  if (ar.request.headers.get("Sec-Fetch-Site")?.trim().toLowerCase() === "cross-site") return true;
  const origin = ar.request.headers.get("Origin");
  if (origin === null) return false;
  return origin.trim().toLowerCase() !== ar.origin.toLowerCase();
}

/** The methods React Router treats as a mutation, whose Origin it checks before any middleware. */
const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * True when React Router's own Origin check refuses the request (400 "Bad Request") because its
 * Origin header is no URL at all (`foo`, `undefined`, `http://[`): the client's malformed request,
 * not a server failure. Mirrors react-router's throwIfPotentialCSRFAttack, whose thrown Error
 * carries no code to tell it by.
 */
export function originHeaderNotAUrl(request: Request): boolean {
  if (!MUTATIONS.has(request.method.toUpperCase())) return false;
  const origin = request.headers.get("Origin");
  if (origin === null || origin === "null") return false;
  try {
    new URL(origin);
    return false;
  } catch {
    return true;
  }
}
