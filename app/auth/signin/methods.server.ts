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
import { notifySecurityChange } from "../accounts/security-notices.server";
import { accountCredentialRef, passkeyCredentialRef } from "../accounts/users.server";
import type { AuthConfig } from "../core/config.server";
import { clientAddress, type AuthRequest } from "../core/request.server";
import { endSessionsStartedWith } from "../core/session.server";
import { db } from "../../db/client.server";
import { beforeUnlinkHooks, getProviders } from "./registry.server";

export function signInMethods(config: AuthConfig, userId: string): Promise<SignInMethods | null> {
  return readSignInMethods(getProviders(config), userId);
}

export function removeSignInMethod(config: AuthConfig, userId: string, method: SignInMethodRef): Promise<RemoveResult> {
  return removeMethod(getProviders(config), userId, method);
}

/** What a removal did: its outcome, and the sessions it ended (those the removed way in started). */
export type Removal<R extends string> = { result: R; endedSessions: string[] };
export type UnlinkResult = "unlinked" | "not-linked" | "last-method";

/**
 * Removes the user's account at `provider` when another way to sign in remains, after the
 * methods' hooks ran (revoking the tokens Vestibule holds for it). The rule is checked first so that a refused unlink revokes
 * nothing, and again, atomically with the delete, by removeSignInMethod. Every session the account
 * started ends, on every instance; the others, this one included unless the
 * account started it, go on.
 */
export async function unlinkAccount(ar: AuthRequest, userId: string, provider: string): Promise<Removal<UnlinkResult>> {
  const config = ar.config;
  const before = await signInMethods(config, userId);
  if (!before || !before.accounts.some((a) => a.provider === provider)) return { result: "not-linked", endedSessions: [] };
  if (!canUnlink(before, provider)) return { result: "last-method", endedSessions: [] };
  const account = await db().account.findFirst({ where: { userId, provider }, select: { id: true } });
  for (const hook of beforeUnlinkHooks) await hook(config, userId, provider);
  const result = await removeSignInMethod(config, userId, { kind: "account", provider });
  if (result === "not-found") return { result: "not-linked", endedSessions: [] };
  if (result === "last-method") return { result: "last-method", endedSessions: [] };
  const endedSessions = account ? await endSessionsStartedWith(userId, accountCredentialRef(account.id)) : [];
  await recordEvent("account-unlinked", { userId, ip: clientAddress(ar), detail: { provider, sessionsEnded: endedSessions.length } });
  const name = getProviders(config).find((p) => p.id === provider)?.name ?? provider;
  await notifySecurityChange(ar, userId, { kind: "account-unlinked", provider: name });
  return { result: "unlinked", endedSessions };
}

/**
 * Removes one of the user's passkeys unless it is their last way to sign in (the atomic rule of
 * removeSignInMethod), ends every session it started, on every instance, and records it.
 */
export async function removePasskey(ar: AuthRequest, userId: string, passkeyId: string): Promise<Removal<RemoveResult>> {
  const passkey = await db().passkey.findFirst({ where: { id: passkeyId, userId }, select: { name: true } });
  const result = await removeSignInMethod(ar.config, userId, { kind: "passkey", id: passkeyId });
  if (result !== "removed") return { result, endedSessions: [] };
  const endedSessions = await endSessionsStartedWith(userId, passkeyCredentialRef(passkeyId));
  await recordEvent("passkey-removed", { userId, ...eventSource(ar), detail: { provider: "passkey", sessionsEnded: endedSessions.length } });
  await notifySecurityChange(ar, userId, { kind: "passkey-removed", name: passkey?.name ?? null });
  return { result, endedSessions };
}
