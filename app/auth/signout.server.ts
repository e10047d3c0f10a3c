// Sign-out (contract §3): CSRF-checked POST that ends the session and clears its cookies.
import { recordEvent } from "./audit.server";
import { readBody } from "./body.server";
import { resolveCallbackUrl } from "./callback-url.server";
import { verifyCsrf } from "./csrf.server";
import { authRequest, clientAddress, type AuthRequest } from "./request.server";
import { errorRedirect, redirectResponse, wantsJsonRedirect } from "./respond.server";
import { endSession } from "./session.server";
import { failureResponse } from "./signin.server";
import { log } from "./log.server";

export type SignOutHook = (ar: AuthRequest, userId: string) => Promise<void>;

/** Work other modules attach to sign-out (say, revoking a provider's tokens). Never blocks sign-out. */
export const signOutHooks: SignOutHook[] = [];

export async function signOutAction(request: Request): Promise<Response> {
  const ar = authRequest(request);
  let body;
  try {
    body = await readBody(request);
  } catch (error) {
    return failureResponse(ar, error, false);
  }
  const json = wantsJsonRedirect(request, body);
  if (!verifyCsrf(ar, body.csrfToken)) return errorRedirect(ar, "MissingCSRF", { json });
  const { url, setCookie } = resolveCallbackUrl(ar, body);
  try {
    const { userId, setCookies } = await endSession(ar);
    if (userId) {
      for (const hook of signOutHooks) {
        await hook(ar, userId).catch((error) => log("warn", "signout-hook-failed", { error }));
      }
      await recordEvent("signout", { userId, ip: clientAddress(ar) });
    }
    return redirectResponse(url, { json, setCookies: [setCookie, ...setCookies] });
  } catch (error) {
    return failureResponse(ar, error, json);
  }
}
