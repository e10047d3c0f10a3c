// "Apps with access" on /account (docs/features/provider.md): what the user allowed through
// Vestibule's provider — one line per app, with its host, the scopes allowed, when and when last
// used — and Revoke, which ends the app's grants, refresh tokens and codes for this user.
import { recordEvent, eventSource } from "../accounts/audit.server";
import type { AuthRequest } from "../core/request.server";
import { db } from "../../db/client.server";
import { removeGrantRows } from "./adapter.server";
import { findClient } from "./clients.server";

export type AppWithAccess = { clientId: string; name: string; host: string; scopes: string[]; grantedAt: string; lastUsedAt: string | null };

/** The host an app is known by: its metadata document's, else its first redirect URI's. */
function hostOf(clientId: string, redirectUris: readonly string[]): string {
  const document = URL.parse(clientId);
  if (document?.protocol === "https:") return document.host;
  const first = redirectUris[0] ? URL.parse(redirectUris[0]) : null;
  return first?.host || first?.protocol.replace(/:$/, "") || clientId;
}

export async function appsWithAccess(userId: string, now = new Date()): Promise<AppWithAccess[]> {
  const grants = await db().oAuthPayload.findMany({
    where: { kind: "Grant", accountId: userId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    orderBy: { createdAt: "asc" },
    select: { id: true, clientId: true, payload: true, createdAt: true },
  });
  const byClient = new Map<string, AppWithAccess>();
  for (const grant of grants) {
    if (!grant.clientId) continue;
    const payload = JSON.parse(grant.payload) as { openid?: { scope?: string } };
    const used = await db().oAuthPayload.findFirst({
      where: { grantId: grant.id, kind: { in: ["RefreshToken", "AccessToken", "AuthorizationCode"] } },
      orderBy: { createdAt: "desc" },
      select: { createdAt: true },
    });
    const scopes = (payload.openid?.scope ?? "").split(" ").filter(Boolean);
    const known = byClient.get(grant.clientId);
    if (known) {
      known.scopes = [...new Set([...known.scopes, ...scopes])];
      if (used && (!known.lastUsedAt || used.createdAt.toISOString() > known.lastUsedAt)) known.lastUsedAt = used.createdAt.toISOString();
      continue;
    }
    const client = await findClient(grant.clientId);
    byClient.set(grant.clientId, {
      clientId: grant.clientId,
      name: client?.name ?? grant.clientId,
      host: hostOf(grant.clientId, client?.redirectUris ?? []),
      scopes,
      grantedAt: grant.createdAt.toISOString(),
      lastUsedAt: used?.createdAt.toISOString() ?? null,
    });
  }
  return [...byClient.values()];
}

/** Revoke: every grant of the user for this app, and all it issued. False when there was none. */
export async function revokeAppAccess(ar: AuthRequest, userId: string, clientId: string): Promise<boolean> {
  const grants = await db().oAuthPayload.findMany({ where: { kind: "Grant", accountId: userId, clientId }, select: { id: true } });
  if (grants.length === 0) return false;
  for (const { id } of grants) await removeGrantRows(id);
  await db().oAuthPayload.deleteMany({ where: { accountId: userId, clientId } });
  await recordEvent("oauth-grant-revoked", { userId, ...eventSource(ar), detail: { clientId } });
  return true;
}
