// What OAuth adds to sign-out (signin/signout.server.ts runs these, through the registry, after
// the session has ended):
//   - revoking the provider tokens Vestibule holds for the user (RFC 7009), so a signed-out user
//     leaves no live refresh token behind;
//   - federated sign-out, for providers that opt in: the browser goes on to the provider's
//     end_session_endpoint (OIDC RP-Initiated Logout) with the ID token as hint, and the provider
//     sends it back to the callback URL, which must be registered there as a post-logout URI.
import { db } from "../../db/client.server";
import { log } from "../core/log.server";
import { openToken, revokeProviderTokens } from "./tokens.server";
import { oauthDefinitions } from "./presets/index.server";
import type { AuthRequest } from "../core/request.server";
import type { SignOutHook } from "../signin/provider";
import { providerClient } from "./client.server";
import { outboundBudget } from "./http.server";

type Hook = SignOutHook;

/**
 * The provider's end-session URL for the user's most recently used opted-in account, if any.
 * `deadline`: when the provider (discovery) must have answered by.
 */
export async function federatedSignOutUrl(
  ar: AuthRequest,
  userId: string,
  callbackUrl: string,
  deadline?: AbortSignal,
): Promise<string | undefined> {
  const opted = oauthDefinitions(ar.config).filter((d) => d.federatedSignOut);
  if (opted.length === 0) return undefined;
  const account = await db().account.findFirst({
    where: { userId, provider: { in: opted.map((d) => d.id) }, idToken: { not: null } },
    orderBy: { updatedAt: "desc" },
  });
  if (!account) return undefined;
  const definition = opted.find((d) => d.id === account.provider)!;
  const pc = await providerClient(definition, outboundBudget(ar.config, deadline));
  if (!pc.as.end_session_endpoint) return undefined;
  const idToken = await openToken(account.idToken, { provider: account.provider, providerAccountId: account.providerAccountId, field: "idToken" });
  const url = new URL(pc.as.end_session_endpoint);
  url.searchParams.set("client_id", definition.clientId);
  if (idToken) url.searchParams.set("id_token_hint", idToken);
  url.searchParams.set("post_logout_redirect_uri", callbackUrl);
  // The provider session it names is ending: the ID token is of no further use.
  await db().account.updateMany({ where: { id: account.id }, data: { idToken: null } });
  return url.href;
}

const federatedSignOut: Hook = async (ar, userId, callbackUrl, deadline) => {
  try {
    return await federatedSignOutUrl(ar, userId, callbackUrl, deadline);
  } catch (error) {
    // The provider cannot be reached: sign-out here still completes, to the callback URL.
    log("warn", "federated-signout-failed", { error });
    return undefined;
  }
};

const revokeTokens: Hook = async (ar, userId, _callbackUrl, deadline) => {
  await revokeProviderTokens(userId, ar.config, { deadline });
};

/**
 * Sign-out runs these side by side (signin/signout.server.ts). They touch different columns: the
 * end-session URL uses and then forgets the ID token, revocation forgets the access and refresh
 * tokens.
 */
export const oauthSignOutHooks: Hook[] = [federatedSignOut, revokeTokens];
