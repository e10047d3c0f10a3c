// OAuth and OIDC sign-in as the registry (signin/registry.server.ts) collects it: one provider per
// configured definition (presets/index.server.ts) — a strategy on the Authenticator plus the two
// legs —, the sign-out hooks (./signout.server.ts), and revoking an account's tokens before it is
// unlinked.
import { signInWithOAuth } from "./link.server";
import { oauthReauthCallback, reauthWithOAuth, startOAuthReauthentication } from "./reauth.server";
import { validateCallbackUrl } from "../core/callback-url.server";
import type { AuthConfig } from "../core/config.server";
import type { Provider, SignInMethod } from "../signin/provider";
import { runStrategy } from "../signin/flow.server";
import { consumeFlow } from "./checks.server";
import { oauthFormActionOrigins } from "./form-action.server";
import { formPostReturn } from "./form-post-return.server";
import { OAuthStrategy } from "./strategy.server";
import type { SignInResult } from "../accounts/users.server";
import { oauthDefinitions } from "./presets/index.server";
import { oauthSignOutHooks } from "./signout.server";
import { revokeDeletedAccountTokens, revokeProviderTokens } from "./tokens.server";

function oauthProviders(config: AuthConfig): Provider[] {
  return oauthDefinitions(config).map((definition) => {
    // A flow /auth/reauth started proves the signed-in user again and never signs in (ADR 080).
    const strategy = new OAuthStrategy<SignInResult>(definition, config, (p) =>
      p.flow.reauth
        ? reauthWithOAuth(p, p.flow.reauth)
        : signInWithOAuth({ request: p.request, config: p.config, provider: { ...p.provider, name: definition.name }, profile: p.profile, tokens: p.tokens }),
    );
    const provider: Provider = {
      id: definition.id,
      name: definition.name,
      type: definition.type,
      strategy: strategy as Provider["strategy"],
      signIn: (ctx) => runStrategy(ctx, definition.id),
      async callback(ctx) {
        // The flow's check cookies are used up whatever happens next: success, a provider error or
        // a failed check. Putting their Set-Cookie headers on the flow means every response
        // runStrategy builds, redirects to an error page included, carries them.
        // A form_post answer a signed-in browser sent without its session cookie comes back as a GET first.
        const resent = await formPostReturn(ctx.ar, ctx.strategyRequest, definition.id, ctx.body, definition.type === "oidc");
        if (resent) return resent;
        const state = typeof ctx.body.state === "string" ? ctx.body.state : null;
        const { result, setCookies } = await consumeFlow(ctx.ar, definition.id, state, definition.type === "oidc");
        ctx.setCookies.push(...setCookies);
        // The flow's own callback URL wins over the shared callback-url cookie (validated again).
        const own = result.ok && result.flow.callbackUrl ? validateCallbackUrl(result.flow.callbackUrl, ctx.ar.origin) : null;
        if (own) ctx.callbackUrl = own;
        if (result.ok && result.flow.reauth) return oauthReauthCallback(ctx, definition.id, definition.type, result.flow.reauth);
        return runStrategy(ctx, definition.id);
      },
      // GET: the usual redirect back; POST: response_mode=form_post (no CSRF token: the state,
      // PKCE and nonce checks are what tie the answer to this browser).
      callbackMethods: ["GET", "POST"],
      callbackRequiresCsrf: false,
    };
    // Only an OpenID provider says when the person authenticated (auth_time).
    if (definition.type === "oidc") provider.reauthenticate = (ctx) => startOAuthReauthentication(ctx, definition, strategy);
    return provider;
  });
}

export const oauthMethod: SignInMethod = {
  providers: oauthProviders,
  signOutHooks: oauthSignOutHooks,
  formActionOrigins: oauthFormActionOrigins,
  // The tokens Vestibule holds for the account are revoked first (RFC 7009).
  beforeUnlink: async (config, userId, provider) => {
    await revokeProviderTokens(userId, config, { provider });
  },
  // A deleted user's tokens are revoked at the providers; failures are logged.
  afterAccountDeleted: async (config, accounts) => {
    await revokeDeletedAccountTokens(config, accounts);
  },
};
