// Data for the sign-in and sign-out pages, and POST /auth/signin without a provider.
import { resolveCallbackUrl, toRelative, validateCallbackUrl } from "../core/callback-url.server";
import { expireCookie } from "../core/cookies.server";
import { ensureCsrfToken, verifyCsrf } from "../core/csrf.server";
import { MAX_EMAIL_ADDRESS_LENGTH, normalizeEmailAddress } from "../core/email-address";
import { passwordLimitWords, signinErrorMessage, signinNoticeMessage } from "../core/messages.server";
import { errorPageData, headersWith, optionalSession } from "../core/page-session.server";
import { t } from "../../i18n/t.server";
import { authRequest, type AuthRequest } from "../core/request.server";
import { errorRedirect, redirectResponse, wantsJsonRedirect } from "../core/respond.server";
import { getSession } from "../core/session.server";
import { KEPT_ADDRESS_MAX_AGE, keepAddressCookie, SIGNIN_STEP_MAX_AGE, takeKeptAddress } from "./kept-address.server";
import { parsePost } from "./flow.server";
import { readPendingSignIn } from "../two-factor/pending.server";
import type { ProviderType } from "./provider";
import { connectionsForDomain, getProviders, passwordPagesOffered } from "./registry.server";
import { domainOf } from "../organizations/connections.server";

export type PageProvider = { id: string; name: string; type: ProviderType; signinUrl: string; callbackUrl: string };

/**
 * The sign-in page's two steps (ADR 087): "address" asks for the e-mail
 * address (with the passkey and the OAuth buttons), "methods" shows the ways to go on with it —
 * the same ways for every address: nothing on this page looks the address up.
 */
export type SigninStep = "address" | "methods";

/** Refusals of the second step's forms: the page shows them on that step, with the address kept. */
const METHODS_STEP_ERRORS = new Set(["CredentialsSignin", "RateLimited", "EmailSignin"]);
/** The refusals whose kept address (the 60-second cookie of a refused form) is read once, unless a refused password leads to step two (ADR 093). */
const READ_ONCE_ERRORS = new Set(["CredentialsSignin", "EmailInvalid"]);

/**
 * Which step to show, and with which address: `?step=methods` (where the first step's POST
 * lands) and a second-step refusal show the second step while the address is kept; `?step=address`
 * (the "change" link without JavaScript) shows the first step with it filled in. Any other visit
 * starts afresh and clears it.
 */
function chooseStep(ar: AuthRequest, error: string | null): { step: SigninStep; address: string | null; setCookie: string | null } {
  const chosen = chooseStepAsked(ar, error);
  if (chosen.step === "address" || normalizeEmailAddress(chosen.address).ok) return chosen;
  // The cookie is ours only as far as no one else can set it: a sibling subdomain or a plain-http
  // answer can plant one. Step two shows an address read-only, as if the page vouched for it, so
  // it shows nothing that is not one (planted words, a bidi override reversing a domain).
  return { step: "address", address: null, setCookie: expireCookie(ar.names.signinEmail, ar.secure) };
}

function chooseStepAsked(ar: AuthRequest, error: string | null): { step: SigninStep; address: string | null; setCookie: string | null } {
  const asked = ar.url.searchParams.get("step");
  const param = ar.url.searchParams.get("email");
  const fromUrl = param && param.length <= MAX_EMAIL_ADDRESS_LENGTH ? param : null;
  if (error !== null && READ_ONCE_ERRORS.has(error)) {
    const kept = takeKeptAddress(ar);
    // A refused password shows step two again with the address this browser typed — never one
    // from the URL, which anyone can link to — kept as long as step two keeps it, so a reload or
    // Back still finds it (ADR 093); a successful sign-in and a plain visit forget it.
    if (error === "CredentialsSignin" && kept.address && normalizeEmailAddress(kept.address).ok) {
      return { step: "methods", address: kept.address, setCookie: keepAddressCookie(ar, kept.address, SIGNIN_STEP_MAX_AGE) };
    }
    // A refused address (EmailInvalid), or a refused password whose address is not one, is
    // corrected on the first step: shown once, as typed.
    return { step: "address", address: fromUrl ?? kept.address, setCookie: kept.setCookie };
  }
  const stays = asked === "methods" || asked === "address" || (error !== null && METHODS_STEP_ERRORS.has(error));
  const kept = takeKeptAddress(ar, { keep: stays });
  if (!stays) return { step: "address", address: fromUrl, setCookie: kept.setCookie };
  return { step: asked !== "address" && kept.address ? "methods" : "address", address: kept.address ?? fromUrl, setCookie: kept.setCookie };
}

/** The page's words for `error`: a cancelled provider sign-in names the provider, if this site offers it. */
function pageErrorMessage(error: string, params: URLSearchParams, providers: readonly PageProvider[]): string {
  if (error === "OAuthCancelled") {
    const provider = providers.find((p) => p.id === params.get("provider") && (p.type === "oauth" || p.type === "oidc"));
    return provider ? t("error.OAuthCancelled", { provider: provider.name }) : t("error.OAuthCancelledAny");
  }
  const text = signinErrorMessage(error, params)!;
  // A password refused near or at its pause (ADR 160): how many tries are left, or the ways in without one.
  const limitWords = passwordLimitWords(error, params, providers.some((p) => p.type === "email"));
  return limitWords ? `${text} ${limitWords}` : text;
}

export async function signinPageData(request: Request) {
  const ar = authRequest(request);
  const csrf = ensureCsrfToken(ar);
  const callback = resolveCallbackUrl(ar);
  const { session, setCookies } = await getSession(ar, { roll: false });
  // A signed-in visitor reads one state: that she is signed in, with the way on. An error in the
  // address is about an attempt before (Back after the sign-in finished, an old tab), never
  // shown beside it.
  const error = session ? null : ar.url.searchParams.get("error");
  const providers: PageProvider[] = getProviders(ar.config).map((p) => ({
    id: p.id,
    name: p.name,
    type: p.type,
    signinUrl: `${ar.config.basePath}/signin/${p.id}`,
    callbackUrl: `${ar.config.basePath}/callback/${p.id}`,
  }));
  // The address of the second step, or after a refused password: carried by a cookie, never
  // by the URL (ADR 087). Not looked up: the page is the same for every address.
  const kept = chooseStep(ar, error);
  // Step two, or a refusal naming the organization's sign-in (SsoRequired with `domain`): the
  // connections of the address's domain — the domain alone, never the account (ADR 152).
  const ssoDomain = error === "SsoRequired" ? ar.url.searchParams.get("domain") : null;
  const connectionDomain = kept.step === "methods" && kept.address ? domainOf(kept.address) : ssoDomain ? domainOf(`x@${ssoDomain}`) : null;
  const connections = connectionDomain ? await offeredConnections(connectionDomain, toRelative(callback.url)) : [];
  const refusal = error === "SsoRequired" && connections.length ? t("error.SsoRequiredBy", { organization: connections[0]!.organizationName }) : null;
  return {
    data: {
      csrfToken: csrf.token,
      callbackUrl: toRelative(callback.url),
      providers,
      error: error ? { code: error.slice(0, 64), message: refusal ?? pageErrorMessage(error, ar.url.searchParams, providers) } : null,
      connections,
      notice: signinNoticeMessage(ar.url.searchParams.get("notice")),
      email: kept.address ?? "",
      step: kept.step,
      signedInAs: session?.data.user.email ?? session?.data.user.name ?? null,
      // Links to sign-up and the forgotten-password page while they are offered.
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
  // "Stay signed in" goes back to the page of this site the visitor came from (the Referer, sent
  // same-origin only), or to their account; never back to this page itself.
  const from = validateCallbackUrl(request.headers.get("Referer"), ar.origin);
  const cancel = from && new URL(from).pathname !== ar.url.pathname ? toRelative(from) : "/account";
  return {
    data: { csrfToken: csrf.token, callbackUrl: toRelative(next), signedIn: session !== null, pendingSignIn: ar.cookies.has(ar.names.twoFactor), cancelUrl: cancel },
    headers: headersWith([csrf.setCookie]),
  };
}

/**
 * POST /auth/signin (no provider): CSRF-checked, then back to the sign-in page. With an `email`
 * (the page's first step without JavaScript), on to the second step: the address rides in a
 * short-lived HttpOnly cookie, never in the URL (ADR 087), and nothing looks it up — every
 * address gets the same answer. A malformed one goes back to the first step, kept as typed.
 */
export async function signinRootAction(request: Request): Promise<Response> {
  const parsed = await parsePost(request);
  if (parsed instanceof Response) return parsed;
  const { ar, body, json } = parsed;
  if (!verifyCsrf(ar, body.csrfToken)) return errorRedirect(ar, "MissingCSRF", { json });
  const page = `${ar.origin}${ar.config.basePath}/signin`;
  if (body.email === undefined) return redirectResponse(page, { json });
  const callback = resolveCallbackUrl(ar, body);
  const callbackUrl = toRelative(callback.url);
  const check = normalizeEmailAddress(body.email);
  if (!check.ok) {
    const typed = typeof body.email === "string" ? body.email : "";
    const keep = typed.trim() === "" ? null : keepAddressCookie(ar, typed, KEPT_ADDRESS_MAX_AGE);
    return redirectResponse(`${page}?${new URLSearchParams({ error: "EmailInvalid", callbackUrl })}`, { json, setCookies: [callback.setCookie, keep] });
  }
  // Kept as typed (the password form normalises it as it always did), as the page with
  // JavaScript keeps it: the second step shows what the visitor wrote.
  const next = `${page}?${new URLSearchParams({ step: "methods", callbackUrl })}`;
  const kept = keepAddressCookie(ar, (body.email as string).trim(), SIGNIN_STEP_MAX_AGE);
  const response = redirectResponse(next, { json, setCookies: [callback.setCookie, kept] });
  if (!json) return response;
  // A JSON client (and the page with JavaScript) reads the domain's connections with the step:
  // `{"url", "connections": [{"id", "organizationName", "url"}]}`, [] for most domains (ADR 152).
  const connections = await offeredConnections(domainOf(check.address)!, callbackUrl);
  return new Response(JSON.stringify({ url: next, connections }), { status: 200, headers: response.headers });
}

/** An address step's connections as the page and a JSON client read them: "Continue with <organizationName>" at `url`. */
export type OfferedConnection = { id: string; organizationName: string; url: string };

async function offeredConnections(domain: string, callbackUrl: string): Promise<OfferedConnection[]> {
  const found = await connectionsForDomain(domain);
  return found.map((c) => ({ id: c.id, organizationName: c.organizationName, url: `${c.signInPath}?${new URLSearchParams({ callbackUrl })}` }));
}

/** Where the error page sends the visitor on: a link with its words, or null for the default. */
export type ErrorPageNext = { href: string; label: string } | null;

/**
 * GET /auth/error: the error page's data, and for Verification what the link was and where to go.
 * A password-reset link (`link=reset`) is called one, with the way to ask for a new one; a used
 * sign-in link opened by a visitor who is signed in says so, with the way to her account, instead
 * of "Unable to sign in" under the signed-in header.
 */
export async function errorPageFor(request: Request) {
  const page = errorPageData(request);
  // Refused for a visitor who is signed in (a linked account, an app's consent, a policy): said in
  // those terms, with the way to the account — never "sign in" beside a signed-in header.
  if (page.code === "AccessDenied" && (await optionalSession(request, { roll: false })).session) {
    return {
      ...page,
      heading: t("errorPage.AccessDeniedSignedIn.heading"),
      message: t("errorPage.AccessDeniedSignedIn.message"),
      detail: null,
      next: { href: "/account", label: t("common.accountLink") } as ErrorPageNext,
    };
  }
  if (page.code !== "Verification") return { ...page, next: null as ErrorPageNext };
  if (new URL(request.url).searchParams.get("link") === "reset") {
    return {
      ...page,
      heading: t("errorPage.VerificationReset.heading"),
      message: t("errorPage.VerificationReset.message"),
      detail: t("errorPage.VerificationReset.detail"),
      next: { href: "/auth/forgot-password", label: t("errorPage.VerificationReset.next") } as ErrorPageNext,
    };
  }
  const { session } = await optionalSession(request, { roll: false });
  if (!session) {
    // A sign-in of this browser waits for its second step (a password given, the code not yet):
    // the old link changes nothing about it, and the page says where to finish it.
    if (await readPendingSignIn(authRequest(request))) {
      return {
        ...page,
        heading: t("errorPage.VerificationPending.heading"),
        message: t("errorPage.VerificationPending.message"),
        detail: null,
        next: { href: "/auth/two-factor", label: t("errorPage.VerificationPending.next") } as ErrorPageNext,
      };
    }
    return { ...page, next: null as ErrorPageNext };
  }
  return {
    ...page,
    heading: t("errorPage.VerificationSignedIn.heading"),
    message: t("errorPage.VerificationSignedIn.message"),
    detail: null,
    next: { href: "/account", label: t("common.accountLink") } as ErrorPageNext,
  };
}

/**
 * GET /auth/signin/<id> (a reload or a bookmark of the page a sign-in form posted to): sign-in
 * starts with a CSRF-checked POST, so this goes to the sign-in page, keeping the callbackUrl when
 * it is a page of this site. Nothing is started and no provider is looked up.
 */
export function providerSigninGet(request: Request): Response {
  const ar = authRequest(request);
  const next = validateCallbackUrl(ar.url.searchParams.get("callbackUrl"), ar.origin);
  const query = next ? `?${new URLSearchParams({ callbackUrl: toRelative(next) })}` : "";
  return redirectResponse(`${ar.origin}${ar.config.basePath}/signin${query}`, { json: wantsJsonRedirect(request) });
}
