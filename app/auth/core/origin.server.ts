// Which POSTs come from another site (contract §10; docs/decisions/037-csp-and-origin.md).
// Browsers name the page a form or fetch was sent from in `Origin`; when it is there and is not
// the app's origin, the POST is refused whatever CSRF token it carries. `Origin: null` (a
// sandboxed frame, a data: URL, a POST after a cross-site redirect) names no origin of ours and
// is refused too. A request without the header (curl, an older client) is left to the CSRF
// token alone.
import type { AuthRequest } from "./request.server";

export function isCrossOriginPost(ar: AuthRequest): boolean {
  if (ar.request.method.toUpperCase() !== "POST") return false;
  const origin = ar.request.headers.get("Origin");
  if (origin === null) return false;
  return origin.trim().toLowerCase() !== ar.origin.toLowerCase();
}
