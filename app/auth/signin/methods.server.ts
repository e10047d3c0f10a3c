// A user's ways to sign in as the configured methods see them, and removing one: the rules live in
// accounts/methods.server.ts; this module hands them the registry's providers and runs the
// methods' "before unlink" hooks (OAuth: revoke the account's tokens).
import { eventSource, recordEvent } from "../accounts/audit.server";
import {
  canUnlink,
  removeSignInMethod as removeMethod,
  signInMethods as readSignInMethods,
  type RemoveResult,
  type SignInMethodRef,
  type SignInMethods,
} from "../accounts/methods.server";
import type { AuthConfig } from "../core/config.server";
import type { AuthRequest } from "../core/request.server";
import { beforeUnlinkHooks, getProviders } from "./registry.server";

export function signInMethods(config: AuthConfig, userId: string): Promise<SignInMethods | null> {
  return readSignInMethods(getProviders(config), userId);
}

export function removeSignInMethod(config: AuthConfig, userId: string, method: SignInMethodRef): Promise<RemoveResult> {
  return removeMethod(getProviders(config), userId, method);
}

export type UnlinkResult = "unlinked" | "not-linked" | "last-method";

/**
 * Removes the user's account at `provider` when another way to sign in remains, after the
 * methods' hooks ran (revoking the tokens Vestibule holds for it). The rule is checked first so that a refused unlink revokes
 * nothing, and again, atomically with the delete, by removeSignInMethod.
 */
export async function unlinkAccount(config: AuthConfig, userId: string, provider: string, ip: string | null = null): Promise<UnlinkResult> {
  const before = await signInMethods(config, userId);
  if (!before || !before.accounts.some((a) => a.provider === provider)) return "not-linked";
  if (!canUnlink(before, provider)) return "last-method";
  for (const hook of beforeUnlinkHooks) await hook(config, userId, provider);
  const result = await removeSignInMethod(config, userId, { kind: "account", provider });
  if (result === "not-found") return "not-linked";
  if (result === "last-method") return "last-method";
  await recordEvent("account-unlinked", { userId, ip, detail: { provider } });
  return "unlinked";
}

/**
 * Removes one of the user's passkeys unless it is their last way to sign in (the atomic rule of
 * removeSignInMethod); records it in the audit trail.
 */
export async function removePasskey(ar: AuthRequest, userId: string, passkeyId: string): Promise<RemoveResult> {
  const result = await removeSignInMethod(ar.config, userId, { kind: "passkey", id: passkeyId });
  if (result === "removed") await recordEvent("passkey-removed", { userId, ...eventSource(ar), detail: { provider: "passkey" } });
  return result;
}
