// Re-authentication at an OpenID provider (ADR 080): the signed-in user asked
// /auth/reauth to prove themselves at the provider their account is linked to. The flow started with
// prompt=login and max_age=0 (strategy.server.ts, startReauthentication) and is marked in the
// state entry with who asked and when. Its answer never signs in, links or switches users: it
// proves the session's own user only when the ID token says the person authenticated after the
// request was made (auth_time, within the clock tolerance) and the provider account is the one
// already linked to that user.
import { db } from "../../db/client.server";
import { eventSource, recordEvent } from "../accounts/audit.server";
import { accountCredentialRef, toSessionUser, type SignInResult } from "../accounts/users.server";
import { OAUTH_CLOCK_TOLERANCE } from "../core/config.server";
import { AuthError } from "../core/errors";
import { log } from "../core/log.server";
import { authRequest } from "../core/request.server";
import { redirectResponse } from "../core/respond.server";
import { reauthUrl } from "../core/recent-auth.server";
import { toRelative } from "../core/callback-url.server";
import type { FlowContext, ReauthContext, ReauthOutcome } from "../signin/provider";
import { completeReauthentication, failureResponse, reauthenticatingSession, reauthSessionGone, reauthSubject } from "../signin/flow.server";
import { t } from "../../i18n/t.server";
import type { ReauthFlow } from "./checks.server";
import type { OAuthProviderDefinition } from "./presets/definition";
import type { OAuthStrategy, OAuthVerifyParams } from "./strategy.server";
import { accountTokenColumns } from "./tokens.server";

/** The verify step of a re-authentication's answer: the session's user, or a refusal. */
export async function reauthWithOAuth(p: OAuthVerifyParams, reauth: ReauthFlow): Promise<SignInResult> {
  const { provider, profile } = p;
  const ar = authRequest(p.request, p.config);
  const refuse = async (reason: string, code: "OAuthCallback" | "OAuthAccountNotLinked") => {
    await recordEvent("signin-failed", { userId: reauth.userId, ...eventSource(ar), detail: { provider: provider.id, intent: "reauth", code } });
    return new AuthError(code, { log: `re-authentication at ${provider.id} refused: ${reason}` });
  };
  // max_age=0 already made the token's auth_time required and recent; this also asks that the
  // person proved themselves after the request was made, not at some earlier login.
  if (p.authTime === null || p.authTime < reauth.at - OAUTH_CLOCK_TOLERANCE) throw await refuse("stale auth_time", "OAuthCallback");
  const account = await db().account.findUnique({
    where: { provider_providerAccountId: { provider: provider.id, providerAccountId: profile.id } },
    include: { user: true },
  });
  if (!account || account.userId !== reauth.userId) throw await refuse("another provider account", "OAuthAccountNotLinked");
  await db().account.update({ where: { id: account.id }, data: await accountTokenColumns(provider.id, profile.id, p.tokens) });
  return { user: toSessionUser(account.user), isNewUser: false, credentialRef: accountCredentialRef(account.id) };
}

/** POST /auth/reauth with an OpenID provider: the user's own linked account there, asked again. */
export async function startOAuthReauthentication(ctx: ReauthContext, definition: OAuthProviderDefinition, strategy: OAuthStrategy<SignInResult>): Promise<ReauthOutcome> {
  const linked = await db().account.count({ where: { userId: ctx.user.id, provider: definition.id } });
  if (linked === 0) return { type: "page", status: 400, error: { code: "OAuthAccountNotLinked", message: t("reauth.notLinked"), refused: { kind: "notLinked" } }, step: "choose" };
  const reauth: ReauthFlow = { userId: ctx.user.id, subject: reauthSubject(ctx.session), at: Math.floor(Date.now() / 1000) };
  return { type: "response", response: await strategy.startReauthentication(ctx.ar, ctx.callbackUrl, reauth) };
}

/**
 * The callback of a re-authentication flow: only in the session that started it; a refusal goes
 * back to /auth/reauth with its code, the session untouched.
 */
export async function oauthReauthCallback(ctx: FlowContext, providerId: string, providerType: "oauth" | "oidc", reauth: ReauthFlow): Promise<Response> {
  const finish = { ar: ctx.ar, json: ctx.json, callbackUrl: ctx.callbackUrl, setCookies: ctx.setCookies };
  const session = await reauthenticatingSession(ctx.ar, reauth.userId, reauth.subject);
  if (!session) return reauthSessionGone(finish);
  try {
    await ctx.authenticate();
  } catch (thrown) {
    if (!(thrown instanceof AuthError)) return failureResponse(ctx.ar, thrown, ctx.json, ctx.setCookies);
    log("warn", "auth-failure", { code: thrown.code, reason: thrown.message, cause: thrown.cause, path: ctx.ar.url.pathname });
    const back = new URL(reauthUrl(ctx.ar, toRelative(ctx.callbackUrl)));
    back.searchParams.set("error", thrown.code);
    return redirectResponse(back.href, { json: ctx.json, setCookies: ctx.setCookies });
  }
  return completeReauthentication(finish, session, providerId, providerType);
}
