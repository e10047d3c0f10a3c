// Sign-out: CSRF-checked POST that ends the session and clears its cookies, then
// runs the sign-out hooks the methods contribute through the registry (OAuth: token revocation,
// federated sign-out); it knows no method itself.
import { eventSource, recordEvent } from "../accounts/audit.server";
import { resolveCallbackUrl } from "../core/callback-url.server";
import { verifyCsrf } from "../core/csrf.server";
import type { AuthRequest } from "../core/request.server";
import { errorRedirect, redirectResponse } from "../core/respond.server";
import { SIGNED_OUT_HEADERS, withHeaders } from "../core/security-headers.server";
import { endSession } from "../core/session.server";
import { failureResponse, parsePost } from "./flow.server";
import { log } from "../core/log.server";
import { signOutHooks } from "./registry.server";
import { clearPendingSignIn } from "../two-factor/pending.server";

/**
 * Runs every hook at once and waits for them together at most the OAuth time budget
 * (AuthConfig.oauthTimeoutMs), so no slow provider keeps the visitor waiting longer, however
 * many there are. A hook that fails or has not finished by then counts as having returned nothing.
 * Results in list order.
 */
async function runSignOutHooks(ar: AuthRequest, userId: string, callbackUrl: string): Promise<(void | string)[]> {
  const deadline = AbortSignal.timeout(ar.config.oauthTimeoutMs);
  const results: (void | string)[] = [];
  const all = Promise.all(
    signOutHooks.map(async (hook, i) => {
      try {
        results[i] = await hook(ar, userId, callbackUrl, deadline);
      } catch (error) {
        log("warn", "signout-hook-failed", { error });
      }
    }),
  );
  const expired = new Promise<void>((resolve) => deadline.addEventListener("abort", () => resolve(), { once: true }));
  await Promise.race([all, expired]);
  return [...results];
}

export async function signOutAction(request: Request): Promise<Response> {
  const parsed = await parsePost(request);
  if (parsed instanceof Response) return parsed;
  const { ar, body, json } = parsed;
  if (!verifyCsrf(ar, body.csrfToken)) return errorRedirect(ar, "MissingCSRF", { json });
  const { url, setCookie } = resolveCallbackUrl(ar, body);
  try {
    const { userId, setCookies } = await endSession(ar);
    let location = url;
    if (userId) {
      const next = (await runSignOutHooks(ar, userId, url)).find((r): r is string => typeof r === "string");
      if (next) location = next;
      await recordEvent("signout", { userId, ...eventSource(ar) });
    }
    // A first factor waiting for its code ends too: on a shared browser, the next person must not
    // find someone's half-finished sign-in (the pending cookie outlives no sign-out).
    const pending = ar.cookies.has(ar.names.twoFactor) ? clearPendingSignIn(ar) : [];
    return withHeaders(redirectResponse(location, { json, setCookies: [setCookie, ...setCookies, ...pending] }), SIGNED_OUT_HEADERS);
  } catch (error) {
    return failureResponse(ar, error, json);
  }
}
