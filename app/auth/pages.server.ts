// Data for the auth pages and the helpers app pages use to require a session.
import { resolveCallbackUrl, toRelative, validateCallbackUrl } from "./core/callback-url.server";
import { ensureCsrfToken, verifyCsrf } from "./core/csrf.server";
import { MAX_EMAIL_ADDRESS_LENGTH } from "./core/email-address";
import { errorPage, signinErrorMessage } from "./core/errors";
import { getProviders, type ProviderType } from "./providers.server";
import { authRequest, type AuthRequest } from "./core/request.server";
import { errorRedirect, redirectResponse } from "./core/respond.server";
import { getSession, type CurrentSession } from "./core/session.server";
import { parsePost } from "./signin.server";
import { takeKeptAddress } from "./signin-email.server";

export type PageProvider = { id: string; name: string; type: ProviderType; signinUrl: string; callbackUrl: string };

function headersWith(setCookies: readonly (string | null | undefined)[]): Headers {
  const headers = new Headers();
  for (const c of setCookies) if (c) headers.append("Set-Cookie", c);
  return headers;
}

export async function signinPageData(request: Request) {
  const ar = authRequest(request);
  const csrf = ensureCsrfToken(ar);
  const callback = resolveCallbackUrl(ar);
  const { session, setCookies } = await getSession(ar, { roll: false });
  const error = ar.url.searchParams.get("error");
  const providers: PageProvider[] = getProviders(ar.config).map((p) => ({
    id: p.id,
    name: p.name,
    type: p.type,
    signinUrl: `${ar.config.basePath}/signin/${p.id}`,
    callbackUrl: `${ar.config.basePath}/callback/${p.id}`,
  }));
  const email = ar.url.searchParams.get("email");
  // After a refused password: the address as typed, carried by a cookie this page clears.
  const kept = takeKeptAddress(ar);
  const shownEmail = email && email.length <= MAX_EMAIL_ADDRESS_LENGTH ? email : error === "CredentialsSignin" ? kept.address : null;
  return {
    data: {
      csrfToken: csrf.token,
      callbackUrl: toRelative(callback.url),
      providers,
      error: error ? { code: error.slice(0, 64), message: signinErrorMessage(error)! } : null,
      email: shownEmail ?? "",
      signedInAs: session?.data.user.email ?? session?.data.user.name ?? null,
    },
    headers: headersWith([csrf.setCookie, callback.setCookie, kept.setCookie, ...setCookies]),
  };
}

export async function signoutPageData(request: Request) {
  const ar = authRequest(request);
  const csrf = ensureCsrfToken(ar);
  // Only an explicit ?callbackUrl: the stored cookie usually names the page the visitor signed in
  // to, often one that needs a session, which is the wrong place to land after signing out.
  const next = validateCallbackUrl(ar.url.searchParams.get("callbackUrl"), ar.origin) ?? `${ar.origin}/`;
  const { session } = await getSession(ar, { roll: false });
  return {
    data: { csrfToken: csrf.token, callbackUrl: toRelative(next), signedIn: session !== null },
    headers: headersWith([csrf.setCookie]),
  };
}

export function errorPageData(request: Request) {
  const code = new URL(request.url).searchParams.get("error");
  const page = errorPage(code);
  return { code: code?.slice(0, 64) ?? null, ...page };
}

/** POST /auth/signin (no provider): CSRF-checked, then back to the sign-in page. */
export async function signinRootAction(request: Request): Promise<Response> {
  const parsed = await parsePost(request);
  if (parsed instanceof Response) return parsed;
  const { ar, body, json } = parsed;
  if (!verifyCsrf(ar, body.csrfToken)) return errorRedirect(ar, "MissingCSRF", { json });
  return redirectResponse(`${ar.origin}${ar.config.basePath}/signin`, { json });
}

export type RequiredSession = { ar: AuthRequest; session: CurrentSession; setCookies: string[] };

/**
 * The request's session, or a thrown redirect to the sign-in page with SessionRequired and the
 * page as callbackUrl.
 */
export async function requireSession(request: Request, { roll = true } = {}): Promise<RequiredSession> {
  const ar = authRequest(request);
  const { session, setCookies } = await getSession(ar, { roll });
  if (!session) {
    const here = validateCallbackUrl(ar.url.pathname + ar.url.search, ar.origin) ?? `${ar.origin}/`;
    const params = new URLSearchParams({ error: "SessionRequired", callbackUrl: toRelative(here) });
    throw redirectResponse(`${ar.config.basePath}/signin?${params}`, { setCookies });
  }
  return { ar, session, setCookies };
}

/** The session for pages that show it without requiring it. */
export async function optionalSession(request: Request, { roll = true } = {}) {
  const ar = authRequest(request);
  const { session, setCookies } = await getSession(ar, { roll });
  return { session, headers: headersWith(setCookies) };
}

export { headersWith };
