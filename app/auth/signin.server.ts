// The sign-in flows around every provider: parse and check the request, run the provider's
// handler, and turn its outcome — a user, a protocol redirect, or a failure — into one response.
import { recordEvent } from "./audit.server";
import { getAuthenticator } from "./authenticator.server";
import { BadRequestError, readBody, refusedBodyResponse, type Body } from "./core/body.server";
import { resolveCallbackUrl, toRelative } from "./core/callback-url.server";
import { verifyCsrf } from "./core/csrf.server";
import { AuthError } from "./core/errors";
import { log } from "./core/log.server";
import { findProvider, type FlowContext } from "./providers.server";
import { authRequest, clientAddress, type AuthRequest } from "./core/request.server";
import { badRequest, errorRedirect, redirectResponse, wantsJsonRedirect } from "./core/respond.server";
import { createSession } from "./core/session.server";
import type { SignInResult } from "./users.server";

/** Maps any failure to its response; causes go to the log, never to the visitor. */
export function failureResponse(ar: AuthRequest, error: unknown, json: boolean, setCookies: string[] = []): Response {
  if (error instanceof Response) return error;
  if (error instanceof BadRequestError) {
    log("info", "bad-request", { reason: error.message, path: ar.url.pathname });
    return refusedBodyResponse(error);
  }
  if (error instanceof AuthError) {
    log("warn", "auth-failure", { code: error.code, reason: error.message, cause: error.cause, path: ar.url.pathname });
    const extra: Record<string, string> = error.code === "CredentialsSignin" ? { code: "credentials" } : {};
    return errorRedirect(ar, error.code, { json, extra, setCookies });
  }
  log("error", "auth-unexpected-error", { error, path: ar.url.pathname });
  return errorRedirect(ar, "Configuration", { json, setCookies });
}

export type ParsedPost = { ar: AuthRequest; body: Body; json: boolean };

/**
 * Reads a POST for an auth endpoint: its body (size-limited, form or JSON) and whether it wants
 * the JSON-redirect answer. A bad body comes back as the response to send.
 */
export async function parsePost(request: Request): Promise<ParsedPost | Response> {
  const ar = authRequest(request);
  try {
    const body = await readBody(request);
    return { ar, body, json: wantsJsonRedirect(request, body) };
  } catch (error) {
    return failureResponse(ar, error, false);
  }
}

/** Creates the session and sends the visitor on: to the callback URL, or to /welcome when new. */
export async function completeSignIn(ctx: FlowContext, providerId: string, result: SignInResult): Promise<Response> {
  const { ar } = ctx;
  const sessionCookies = await createSession(ar, result.user);
  await recordEvent("signin", {
    userId: result.user.id,
    ip: clientAddress(ar),
    detail: { provider: providerId, isNewUser: result.isNewUser, strategy: ar.config.sessionStrategy },
  });
  const target = result.isNewUser
    ? `${ar.origin}/welcome?${new URLSearchParams({ callbackUrl: toRelative(ctx.callbackUrl) })}`
    : ctx.callbackUrl;
  return redirectResponse(target, { json: ctx.json, setCookies: [...ctx.setCookies, ...sessionCookies] });
}

/**
 * Runs the provider's remix-auth strategy. A resolved user completes the sign-in; a thrown
 * redirect (a protocol hop such as "go to the IdP" or "check your e-mail") is passed on with the
 * flow's cookies, as `{url}` in JSON-redirect mode.
 */
export async function runStrategy(ctx: FlowContext, providerId: string): Promise<Response> {
  let result: SignInResult;
  try {
    result = await getAuthenticator(ctx.ar.config).authenticate(providerId, ctx.strategyRequest);
  } catch (thrown) {
    if (thrown instanceof Response && thrown.headers.has("Location")) {
      return redirectResponse(thrown.headers.get("Location")!, {
        json: ctx.json,
        setCookies: [...ctx.setCookies, ...thrown.headers.getSetCookie()],
      });
    }
    return failureResponse(ctx.ar, thrown, ctx.json, ctx.setCookies);
  }
  return completeSignIn(ctx, providerId, result);
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

  const { url: callbackUrl, setCookie } = resolveCallbackUrl(ar, leg === "signIn" || method === "POST" ? body : undefined);
  const ctx: FlowContext = {
    ar,
    body,
    json,
    callbackUrl,
    setCookies: setCookie ? [setCookie] : [],
    strategyRequest: strategyRequest(request, body),
  };
  try {
    return await handler(ctx);
  } catch (error) {
    return failureResponse(ar, error, json, ctx.setCookies);
  }
}
