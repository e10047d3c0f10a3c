// GET|POST /auth/reauth?callbackUrl= (ADR 080): the signed-in user proves who they
// are again with one of their own factors, and goes back to the page that asked. Which factors the
// page offers is this user's: their password (if they have one), their passkeys (JavaScript only;
// the options allow only theirs), a code e-mailed to their address, their linked OpenID accounts.
// Each method checks its factor (Provider.reauthenticate); flow.server.ts finishes — the second
// factor when it is on, then the session renewed. Signed out, there is nobody to re-authenticate:
// the sign-in page, with the same way back. Nothing here signs in, links or switches users.
import { db } from "../../db/client.server";
import { AuthError } from "../core/errors";
import { toRelative, validateCallbackUrl } from "../core/callback-url.server";
import { ensureCsrfToken, verifyCsrf } from "../core/csrf.server";
import { log } from "../core/log.server";
import { signinErrorMessage } from "../core/messages.server";
import { isDatabaseUnavailable, noteDatabaseUnavailable, outageRedirect } from "../core/outage.server";
import { REAUTH_PAGE } from "../core/recent-auth.server";
import { authRequest, type AuthRequest } from "../core/request.server";
import { errorRedirect, redirectResponse } from "../core/respond.server";
import { getSession, type CurrentSession } from "../core/session.server";
import { t } from "../../i18n/t.server";
import type { MessageKey } from "../../i18n/catalogues/en";
import { completeReauthentication, failureResponse, parsePost } from "./flow.server";
import type { Body } from "../core/body.server";
import type { ReauthContext, ReauthOutcome, ReauthRefusal, ReauthRefusalKind } from "./provider";
import { getProviders } from "./registry.server";
import { signInMethods } from "./methods.server";

export type ReauthStep = "choose" | "code";

export type ReauthPage = {
  csrfToken: string;
  /** Where the page goes back to (relative), and its own URL for the forms. */
  callbackUrl: string;
  action: string;
  /** The user's own address, where a code goes. */
  email: string | null;
  methods: { password: string | null; passkey: string | null; email: string | null; providers: { id: string; name: string }[] };
  step: ReauthStep;
  error: string | null;
};

export type ReauthPageOutcome =
  | { type: "page"; status: number; page: ReauthPage; setCookies: string[]; retryAfterSeconds?: number }
  | { type: "response"; response: Response };

type Visitor = { ar: AuthRequest; session: CurrentSession; user: { id: string; email: string | null }; callbackUrl: string; setCookies: string[] };

/** The way back: a same-origin page (section 5's rules), else /account. */
function callbackOf(ar: AuthRequest, body?: Body): string {
  const raw = body?.callbackUrl ?? ar.url.searchParams.get("callbackUrl");
  return validateCallbackUrl(raw, ar.origin) ?? `${ar.origin}/account`;
}

function pageUrl(ar: AuthRequest, callbackUrl: string, extra: Record<string, string> = {}): string {
  return `${ar.origin}${ar.config.basePath}${REAUTH_PAGE}?${new URLSearchParams({ callbackUrl: toRelative(callbackUrl), ...extra })}`;
}

/** The signed-in visitor, or the answer for one who is not (the sign-in page, back to the same page after). */
async function visitor(ar: AuthRequest, json: boolean, body?: Body): Promise<Visitor | Response> {
  const callbackUrl = callbackOf(ar, body);
  const { session, setCookies } = await getSession(ar, { roll: false });
  const user = session ? await db().user.findUnique({ where: { id: session.userId }, select: { id: true, email: true, disabledAt: true } }) : null;
  if (!session || !user || user.disabledAt) {
    const params = new URLSearchParams({ callbackUrl: toRelative(callbackUrl) });
    return redirectResponse(`${ar.origin}${ar.config.basePath}/signin?${params}`, { json, setCookies });
  }
  return { ar, session, user: { id: user.id, email: user.email }, callbackUrl, setCookies };
}

/** The factors this user can prove here, each by the id of the provider that checks it. */
async function offered(v: Visitor): Promise<ReauthPage["methods"]> {
  const providers = getProviders(v.ar.config).filter((p) => p.reauthenticate);
  const mine = await signInMethods(v.ar.config, v.user.id);
  const byType = (type: string) => providers.find((p) => p.type === type)?.id ?? null;
  const linked = new Set(mine?.accounts.filter((a) => a.usable).map((a) => a.provider) ?? []);
  return {
    password: mine?.password ? byType("credentials") : null,
    passkey: mine?.passkeys.some((p) => p.usable) ? byType("webauthn") : null,
    email: v.user.email ? byType("email") : null,
    providers: providers.filter((p) => p.type === "oidc" && linked.has(p.id)).map((p) => ({ id: p.id, name: p.name })),
  };
}

async function page(v: Visitor, step: ReauthStep, error: string | null): Promise<{ page: ReauthPage; setCookies: string[] }> {
  const csrf = ensureCsrfToken(v.ar);
  const methods = await offered(v);
  return {
    page: {
      csrfToken: csrf.token,
      callbackUrl: toRelative(v.callbackUrl),
      action: toRelative(pageUrl(v.ar, v.callbackUrl)),
      email: methods.email ? v.user.email : null,
      methods,
      step: step === "code" && methods.email ? "code" : "choose",
      error,
    },
    setCookies: [...v.setCookies, ...(csrf.setCookie ? [csrf.setCookie] : [])],
  };
}

function outage(ar: AuthRequest, error: unknown, json: boolean): Response {
  if (!isDatabaseUnavailable(error)) throw error;
  noteDatabaseUnavailable(error, ar.url.pathname);
  return outageRedirect(ar, { json });
}

/**
 * A refused password, code or passkey answers a browser with a redirect back to this page
 * (Post/Redirect/Get), its refusal in the query: `refused` (which words) and `tries` (a wrong code's
 * tries left). Back, after the right answer, then lands on a page, never on the answer to a POST
 * (Chromium's "Confirm form resubmission"). The query only picks the words; what is counted stays
 * on the server, and nothing typed is in it. A refusal over a limit (429, with Retry-After) is
 * still drawn in place.
 */
const REFUSED_PARAM = "refused";
const TRIES_PARAM = "tries";
const REFUSAL_KEYS: Record<ReauthRefusalKind, MessageKey> = {
  password: "reauth.passwordWrong",
  passwordNeedsCode: "reauth.passwordNeedsCode",
  passkey: "reauth.passkeyRefused",
  codeRequired: "emailCode.required",
  codeWrong: "emailCode.wrong",
  codeEnded: "reauth.codeEnded",
  notLinked: "reauth.notLinked",
  chooseFactor: "reauth.chooseFactor",
};

function refusalQuery(refused: ReauthRefusal): Record<string, string> {
  return refused.triesLeft === undefined ? { [REFUSED_PARAM]: refused.kind } : { [REFUSED_PARAM]: refused.kind, [TRIES_PARAM]: String(refused.triesLeft) };
}

function refusalText(params: URLSearchParams): string | null {
  const kind = params.get(REFUSED_PARAM);
  if (!kind || !Object.hasOwn(REFUSAL_KEYS, kind)) return null;
  const tries = Number(params.get(TRIES_PARAM));
  const triesLeft = Number.isSafeInteger(tries) && tries >= 0 && tries <= 100 ? tries : 0;
  const words = t(REFUSAL_KEYS[kind as ReauthRefusalKind], { triesLeft });
  // A wrong password with few tries left before the pause says how many, as the sign-in page does.
  return kind === "password" && params.has(TRIES_PARAM) && triesLeft > 0 ? `${words} ${t("limit.passwordTriesLeft", { tries: triesLeft })}` : words;
}

/** GET: the factors to choose from, or the code form (`step=code`), and a refusal passed back (`refused`, or `error`). */
export async function reauthPageData(request: Request): Promise<ReauthPageOutcome> {
  const ar = authRequest(request);
  try {
    const v = await visitor(ar, false);
    if (v instanceof Response) return { type: "response", response: v };
    const code = ar.url.searchParams.get("error");
    const step = ar.url.searchParams.get("step") === "code" ? "code" : "choose";
    const shown = await page(v, step, refusalText(ar.url.searchParams) ?? (code ? (signinErrorMessage(code.slice(0, 64)) ?? t("reauth.refused")) : null));
    return { type: "page", status: 200, ...shown };
  } catch (error) {
    return { type: "response", response: outage(ar, error, false) };
  }
}

/** A method's answer as the page, or as `{url}` for a JSON client. */
async function answer(v: Visitor, json: boolean, outcome: ReauthOutcome, providerId: string): Promise<ReauthPageOutcome> {
  const { ar } = v;
  if (outcome.type === "proved") {
    const response = await completeReauthentication({ ar, json, callbackUrl: v.callbackUrl, setCookies: v.setCookies }, v.session, providerId, outcome.providerType);
    return { type: "response", response };
  }
  if (outcome.type === "response") {
    const { response } = outcome;
    const location = response.headers.get("Location");
    if (!location) return { type: "response", response };
    return { type: "response", response: redirectResponse(location, { json, setCookies: [...v.setCookies, ...response.headers.getSetCookie()] }) };
  }
  const setCookies = [...v.setCookies, ...(outcome.setCookies ?? [])];
  // A code was sent: the code form at its own address, so reloading it sends nothing again.
  if (json || (!outcome.error && outcome.step === "code")) {
    const extra: Record<string, string> = outcome.error ? { error: outcome.error.code } : {};
    if (outcome.step === "code") extra.step = "code";
    const response = redirectResponse(pageUrl(ar, v.callbackUrl, extra), { json, setCookies });
    if (outcome.retryAfterSeconds) response.headers.set("Retry-After", String(outcome.retryAfterSeconds));
    return { type: "response", response };
  }
  // A refusal of what was typed or answered (400): back to the page, which says why. One a method
  // did not name is its code's words (`error`), as a JSON client's.
  if (outcome.error && outcome.status === 400) {
    const why = outcome.error.refused ? refusalQuery(outcome.error.refused) : { error: outcome.error.code };
    const extra = { ...why, ...(outcome.step === "code" ? { step: "code" } : {}) };
    return { type: "response", response: redirectResponse(pageUrl(ar, v.callbackUrl, extra), { setCookies }) };
  }
  const shown = await page({ ...v, setCookies }, outcome.step, outcome.error?.message ?? null);
  return { type: "page", status: outcome.status, ...shown, ...(outcome.retryAfterSeconds ? { retryAfterSeconds: outcome.retryAfterSeconds } : {}) };
}

/** POST: `csrfToken`, `callbackUrl`, `provider` (the factor's provider id) and what that factor needs. */
export async function reauthAction(request: Request): Promise<ReauthPageOutcome> {
  const parsed = await parsePost(request);
  if (parsed instanceof Response) return { type: "response", response: parsed };
  const { ar, body, json } = parsed;
  if (!verifyCsrf(ar, body.csrfToken)) return { type: "response", response: errorRedirect(ar, "MissingCSRF", { json }) };
  let v: Visitor | Response;
  try {
    v = await visitor(ar, json, body);
  } catch (error) {
    return { type: "response", response: outage(ar, error, json) };
  }
  if (v instanceof Response) return { type: "response", response: v };
  const provider = getProviders(ar.config).find((p) => p.id === body.provider && p.reauthenticate);
  if (!provider?.reauthenticate) {
    return answer(v, json, { type: "page", status: 400, error: { code: "Signin", message: t("reauth.chooseFactor"), refused: { kind: "chooseFactor" } }, step: "choose" }, "");
  }
  const ctx: ReauthContext = { ar, body, json, callbackUrl: v.callbackUrl, session: v.session, user: v.user, setCookies: v.setCookies };
  try {
    return await answer(v, json, await provider.reauthenticate(ctx), provider.id);
  } catch (error) {
    if (error instanceof AuthError) {
      log("warn", "auth-failure", { code: error.code, reason: error.message, cause: error.cause, path: ar.url.pathname });
      const message = signinErrorMessage(error.code) ?? t("reauth.refused");
      return answer(v, json, { type: "page", status: 400, error: { code: error.code, message }, step: "choose" }, provider.id);
    }
    return { type: "response", response: failureResponse(ar, error, json, ctx.setCookies) };
  }
}

/** JSON-mode clients always get a Response: `{url}` (the page again, with `error` when refused). */
export async function reauthJsonAction(request: Request): Promise<Response> {
  const outcome = await reauthAction(request);
  if (outcome.type === "response") return outcome.response;
  const ar = authRequest(request);
  return redirectResponse(pageUrl(ar, callbackOf(ar)), { json: true });
}
