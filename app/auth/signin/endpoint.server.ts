// The sign-in endpoints: POST /auth/signin/<id> and GET|POST /auth/callback/<id> (one provider's
// flow), and GET /auth/providers. They look the provider up in the registry and hand its
// handler a FlowContext that can run its strategy.
import { readBody, type Body } from "../core/body.server";
import { resolveCallbackUrl } from "../core/callback-url.server";
import { verifyCsrf } from "../core/csrf.server";
import { WEBAUTHN_OPTIONS_ERRORS } from "../core/errors";
import { log } from "../core/log.server";
import { authBaseUrl, authRequest, type AuthRequest } from "../core/request.server";
import { badRequest, errorRedirect, jsonResponse, jsonTextResponse, wantsJsonRedirect } from "../core/respond.server";
import { normalizeEmailAddress } from "../core/email-address";
import { ssoRequiredForAddress } from "../organizations/policy.server";
import { getAuthenticator } from "./authenticator.server";
import { failureResponse, parsePost } from "./flow.server";
import { keepAddressOnRefusal } from "./kept-address.server";
import type { FlowContext } from "./provider";
import { emailStepUpResponse } from "./step-up.server";
import { findProvider, getProviders } from "./registry.server";
import { readPendingSignIn } from "../two-factor/pending.server";

// GET /auth/providers answers the same text for one configuration and origin (the origin varies
// only with AUTH_TRUST_HOST): serialised once, a handful of entries per configuration.
const providersText = new WeakMap<object, Map<string, string>>();
const PROVIDERS_ORIGINS_KEPT = 16;

export function providersResponse(request: Request): Response {
  const ar = authRequest(request);
  let byOrigin = providersText.get(ar.config);
  if (!byOrigin) providersText.set(ar.config, (byOrigin = new Map()));
  let text = byOrigin.get(ar.origin);
  if (text === undefined) {
    const base = authBaseUrl(ar);
    text = JSON.stringify(
      Object.fromEntries(
        getProviders(ar.config).map((p) => [
          p.id,
          { id: p.id, name: p.name, type: p.type, signinUrl: `${base}/signin/${p.id}`, callbackUrl: `${base}/callback/${p.id}` },
        ]),
      ),
    );
    if (byOrigin.size >= PROVIDERS_ORIGINS_KEPT) byOrigin.clear();
    byOrigin.set(ar.origin, text);
  }
  return jsonTextResponse(text);
}

function strategyRequest(request: Request, body: Body): Request {
  if (request.method !== "POST") return new Request(request.url, { method: request.method, headers: request.headers });
  const headers = new Headers(request.headers);
  headers.set("Content-Type", "application/x-www-form-urlencoded");
  headers.delete("Content-Length");
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) {
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") form.set(k, String(v));
  }
  return new Request(request.url, { method: "POST", headers, body: form });
}

/** A browser's visit or form post: it asks for text/html and is not in JSON mode (by header). */
function asksForPage(request: Request): boolean {
  return (request.headers.get("Accept") ?? "").includes("text/html") && !wantsJsonRedirect(request);
}

/**
 * Whether a request to a protocol endpoint is a browser's visit or form post (also not json=true
 * in its body), whose refusals are drawn as the error page (app/root.tsx).
 */
export async function isPageRequest(request: Request): Promise<boolean> {
  if (!asksForPage(request)) return false;
  if (request.method.toUpperCase() !== "POST") return true;
  try {
    return !wantsJsonRedirect(request, await readBody(request));
  } catch {
    // A refused body (too large, another type): the action reads the same refusal, for the page.
    return true;
  }
}

/**
 * providerFlow's answer, for a browser: redirects as they are; a refusal thrown with its status
 * only (none of the protocol's English words), for the error page in the visitor's language.
 * Any other client gets the answer as it is.
 */
export function refusalAsPage(request: Request, response: Response): Response {
  if (response.status < 400 || !asksForPage(request)) return response;
  throw new Response(null, { status: response.status });
}

/** POST /auth/signin/<id> and GET|POST /auth/callback/<id>. */
export async function providerFlow(request: Request, providerId: string | undefined, leg: "signIn" | "callback"): Promise<Response> {
  const method = request.method.toUpperCase();
  let ar: AuthRequest, body: Body, json: boolean;
  if (method === "POST") {
    const parsed = await parsePost(request);
    if (parsed instanceof Response) return parsed;
    ({ ar, body, json } = parsed);
  } else {
    ar = authRequest(request);
    body = Object.fromEntries(ar.url.searchParams);
    json = wantsJsonRedirect(request);
  }
  const provider = providerId ? findProvider(ar.config, providerId) : undefined;
  const handler = provider?.[leg];
  const allowed = leg === "signIn" ? method === "POST" : provider?.callbackMethods.includes(method as "GET" | "POST");
  if (!provider || !handler || !allowed) return badRequest();

  const needsCsrf = leg === "signIn" || provider.callbackRequiresCsrf;
  if (needsCsrf && !verifyCsrf(ar, body.csrfToken)) return errorRedirect(ar, "MissingCSRF", { json });

  // An organization that requires its connection: no e-mail link or code is sent to its domain's
  // addresses (by the domain alone: the same answer for each, ADR 165).
  if (leg === "signIn" && provider.type === "email") {
    const address = normalizeEmailAddress(body.email);
    const domain = address.ok ? await ssoRequiredForAddress(address.address) : null;
    if (domain) return errorRedirect(ar, "SsoRequired", { json, extra: { domain } });
  }
  const { url: callbackUrl, setCookie } = resolveCallbackUrl(ar, leg === "signIn" || method === "POST" ? body : undefined);
  const ctx: FlowContext = {
    ar,
    body,
    json,
    providerType: provider.type,
    callbackUrl,
    setCookies: setCookie ? [setCookie] : [],
    strategyRequest: strategyRequest(request, body),
    authenticate: () => getAuthenticator(ar.config).authenticate(provider.id, ctx.strategyRequest),
    emailStepUp: (address, options) => emailStepUpResponse(ar, callbackUrl, address, options),
  };
  let response: Response;
  try {
    response = await handler(ctx);
  } catch (error) {
    response = failureResponse(ar, error, json, ctx.setCookies);
  }
  // The typed address back to the form that was refused, for every method with an address field.
  return keepAddressOnRefusal(ctx, response);
}

/** GET /auth/webauthn-options/<id>: a WebAuthn provider's ceremony options (passkeys/options.server.ts). */
export async function webauthnOptionsFlow(request: Request, providerId: string | undefined): Promise<Response> {
  const ar = authRequest(request);
  const provider = providerId ? findProvider(ar.config, providerId) : undefined;
  if (!provider?.webauthnOptions || request.method.toUpperCase() !== "GET") return badRequest();
  try {
    // A pending sign-in's second step (ADR 104) asks for its user's own passkeys.
    const pending = ar.url.searchParams.get("action") === "second-step" ? await readPendingSignIn(ar) : null;
    return await provider.webauthnOptions(ar, pending?.userId ?? null);
  } catch (error) {
    log("error", "webauthn-options-failed", { error, path: ar.url.pathname });
    const { status, error: message } = WEBAUTHN_OPTIONS_ERRORS.unavailable;
    return jsonResponse({ error: message }, { status, noCache: true });
  }
}
