// Sign-out (contract §3): CSRF-checked POST that ends the session and clears its cookies.
import { recordEvent } from "./audit.server";
import { resolveCallbackUrl } from "./callback-url.server";
import { verifyCsrf } from "./csrf.server";
import { clientAddress, type AuthRequest } from "./request.server";
import { errorRedirect, redirectResponse } from "./respond.server";
import { endSession } from "./session.server";
import { failureResponse, parsePost } from "./signin.server";
import { log } from "./log.server";
import { oauthSignOutHooks } from "./oauth-signout.server";

/**
 * Runs after the session has ended. A hook may return a URL to send the browser on to instead of
 * the callback URL (federated sign-out at an OpenID provider); the first such URL wins.
 */
export type SignOutHook = (ar: AuthRequest, userId: string, callbackUrl: string) => Promise<void | string>;

/** Work other modules attach to sign-out (say, revoking a provider's tokens). Never blocks sign-out. */
export const signOutHooks: SignOutHook[] = [...oauthSignOutHooks];

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
      for (const hook of signOutHooks) {
        const next = await hook(ar, userId, url).catch((error) => log("warn", "signout-hook-failed", { error }));
        if (typeof next === "string" && location === url) location = next;
      }
      await recordEvent("signout", { userId, ip: clientAddress(ar) });
    }
    return redirectResponse(location, { json, setCookies: [setCookie, ...setCookies] });
  } catch (error) {
    return failureResponse(ar, error, json);
  }
}
