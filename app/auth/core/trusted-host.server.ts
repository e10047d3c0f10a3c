// Requests that name a host AUTH_ALLOWED_HOSTS does not list ( AUTH_TRUST_HOST,
// docs/decisions/105). Without AUTH_URL the app builds e-mailed links, redirects and the passkey
// relying party on the host a request names — X-Forwarded-Host behind a proxy (AUTH_TRUST_HOST),
// else its own Host — so a request naming another host is answered 400 {"error":"UntrustedHost"}
// by the root middleware before any loader or action runs, for pages and JSON clients alike, and
// logged (the host, nothing else). With AUTH_URL set nothing is refused: no header makes a link.
import { getConfig } from "./config.server";
import { log } from "./log.server";
import { authRequest } from "./request.server";
import { jsonResponse } from "./respond.server";

/** The error code of the refusal, in its JSON body. */
export const UNTRUSTED_HOST = "UntrustedHost";

/** 400 UntrustedHost for a request naming a host that is not allowed; null when it may go on. */
export function untrustedHostRefusal(request: Request): Response | null {
  const { untrustedHost } = authRequest(request, getConfig());
  if (untrustedHost === null) return null;
  log("warn", "untrusted-host", { host: untrustedHost.slice(0, 255) });
  return jsonResponse({ error: UNTRUSTED_HOST }, { status: 400, noCache: true });
}
