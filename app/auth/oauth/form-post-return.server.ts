// A response_mode=form_post answer (Apple's, or any provider asked for it) arrives as a POST from
// the provider's site, and browsers send a cross-site POST without SameSite=Lax cookies — the
// session cookie among them. The check cookies are SameSite=None for such flows and arrive, but a
// browser that was signed in when it started the flow (linking a provider from /account, a
// re-authentication) would look signed out: a link would become a sign-in as someone else, a
// re-authentication would fail. So when the flow was started signed in and this POST came
// cross-site without the session cookie, the answer is sent on, unchanged and unchecked, as a
// GET to the same callback (303): a top-level GET navigation carries the Lax cookies, and the
// state, PKCE and nonce checks then run as for any callback. Nothing is consumed here.
import { authBaseUrl, type AuthRequest } from "../core/request.server";
import { sessionCookieDigest } from "../core/session.server";
import type { Body } from "../core/body.server";
import { consumeFlow } from "./checks.server";

/** The 303 that re-delivers the answer as a GET, or null when the POST is processed as it is. */
export async function formPostReturn(ar: AuthRequest, request: Request, providerId: string, body: Body, needsNonce: boolean): Promise<Response | null> {
  if (request.method.toUpperCase() !== "POST") return null;
  if (request.headers.get("sec-fetch-site") !== "cross-site" || sessionCookieDigest(ar) !== null) return null;
  const state = typeof body.state === "string" ? body.state : null;
  // consumeFlow only reads the request: its cookie changes are dropped, the flow stays pending.
  const { result } = await consumeFlow(ar, providerId, state, needsNonce);
  if (!result.ok || !result.flow.signedIn) return null;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) if (typeof value === "string") query.set(name, value);
  return new Response(null, {
    status: 303,
    headers: { Location: `${authBaseUrl(ar)}/callback/${providerId}?${query}`, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" },
  });
}
