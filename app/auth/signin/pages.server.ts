// Data for the sign-in and sign-out pages, and POST /auth/signin without a provider.
import { resolveCallbackUrl, toRelative, validateCallbackUrl } from "../core/callback-url.server";
import { ensureCsrfToken, verifyCsrf } from "../core/csrf.server";
import { MAX_EMAIL_ADDRESS_LENGTH } from "../core/email-address";
import { signinErrorMessage } from "../core/messages.server";
import { headersWith } from "../core/page-session.server";
import { authRequest } from "../core/request.server";
import { errorRedirect, redirectResponse } from "../core/respond.server";
import { getSession } from "../core/session.server";
import { takeKeptAddress } from "../credentials/kept-address.server";
import { parsePost } from "./flow.server";
import type { ProviderType } from "./provider";
import { getProviders, passwordPagesOffered } from "./registry.server";

export type PageProvider = { id: string; name: string; type: ProviderType; signinUrl: string; callbackUrl: string };

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
      error: error ? { code: error.slice(0, 64), message: signinErrorMessage(error, ar.url.searchParams)! } : null,
      email: shownEmail ?? "",
      signedInAs: session?.data.user.email ?? session?.data.user.name ?? null,
      // Links to sign-up and the forgotten-password page while they are offered (contract section 15).
      passwordPages: passwordPagesOffered(ar.config),
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

/** POST /auth/signin (no provider): CSRF-checked, then back to the sign-in page. */
export async function signinRootAction(request: Request): Promise<Response> {
  const parsed = await parsePost(request);
  if (parsed instanceof Response) return parsed;
  const { ar, body, json } = parsed;
  if (!verifyCsrf(ar, body.csrfToken)) return errorRedirect(ar, "MissingCSRF", { json });
  return redirectResponse(`${ar.origin}${ar.config.basePath}/signin`, { json });
}
