// The app's side of an OAuth sign-in in tests: POST /auth/signin/<id> with a real CSRF token,
// then the provider's answer delivered to /auth/callback/<id> the way the browser would (a GET
// after a redirect, or the cross-site POST of a form_post page).
import { sessionResponse } from "../../app/auth/core/endpoints.server.ts";
import * as callbackRoute from "../../app/routes/auth/callback.ts";
import * as signinRoute from "../../app/routes/auth/signin-provider.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "./http.ts";
import { visitIdp, type IdpAnswer } from "./idp.ts";

export type StartOptions = { callbackUrl?: string; json?: boolean; query?: string };

/** POST /auth/signin/<provider> with the jar's CSRF token; applies the Set-Cookie headers. */
export async function startSignIn(jar: CookieJar, provider = "oidc", options: StartOptions = {}): Promise<Response> {
  const csrfToken = await fetchCsrf(jar);
  const body: Record<string, string> = { csrfToken };
  if (options.callbackUrl) body.callbackUrl = options.callbackUrl;
  if (options.json) body.json = "true";
  const res = await callRoute(signinRoute.action, post(`/auth/signin/${provider}${options.query ?? ""}`, body, { jar }), { provider });
  jar.apply(res);
  return res;
}

/** Where a sign-in start sends the browser (the Location, or `url` in JSON-redirect mode). */
export async function authorizationUrlOf(res: Response): Promise<string> {
  const location = res.headers.get("Location");
  if (location) return location;
  const body = (await res.clone().json()) as { url?: string };
  if (!body.url) throw new Error(`no redirect in the sign-in answer (status ${res.status})`);
  return body.url;
}

/** Delivers the IdP's answer to the app's callback route; applies the Set-Cookie headers. */
export async function deliver(jar: CookieJar, answer: IdpAnswer, provider = "oidc"): Promise<Response> {
  let res: Response;
  if (answer.kind === "redirect") {
    const url = new URL(answer.url);
    res = await callRoute(callbackRoute.loader, get(url.pathname + url.search, { jar }), { provider });
  } else {
    const url = new URL(answer.action);
    res = await callRoute(callbackRoute.action, post(url.pathname + url.search, answer.fields, { jar }), { provider });
  }
  jar.apply(res);
  return res;
}

/** The whole round trip for one user: start, sign in at the IdP, come back. */
export async function signInThroughIdp(
  jar: CookieJar,
  user: { email: string; password: string } | "cancel",
  options: StartOptions & { provider?: string; idpJar?: CookieJar } = {},
): Promise<{ start: Response; answer: IdpAnswer; res: Response }> {
  const provider = options.provider ?? "oidc";
  const start = await startSignIn(jar, provider, options);
  const answer = await visitIdp(await authorizationUrlOf(start), user, options.idpJar);
  const res = await deliver(jar, answer, provider);
  return { start, answer, res };
}

/** GET /auth/session with the jar: the session JSON or null. */
export async function sessionOf(jar: CookieJar): Promise<{ user: { name: string | null; email: string | null; image: string | null } } | null> {
  const res = await sessionResponse(get("/auth/session", { jar }));
  jar.apply(res);
  return (await res.json()) as never;
}

/** The names of the check cookies a response sets (value present) and expires (Max-Age=0). */
export function checkCookieChanges(res: Response) {
  const set: string[] = [];
  const expired: string[] = [];
  for (const c of res.headers.getSetCookie()) {
    const name = c.slice(0, c.indexOf("="));
    if (!/^authjs\.(state|pkce\.code_verifier|nonce)$/.test(name)) continue;
    if (/Max-Age=0/.test(c)) expired.push(name);
    else set.push(name);
  }
  return { set: set.sort(), expired: expired.sort() };
}
