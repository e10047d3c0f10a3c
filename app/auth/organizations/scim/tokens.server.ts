// SCIM bearer tokens (docs/features/scim.md, ADR 156): one or more per organization, made by an
// owner or admin (never a member) after a recent sign-in, shown once, kept only as a SHA-256,
// revocable, listed with their last use. Each creation and revocation is an audit event.
import { db } from "../../../db/client.server";
import { randomToken, sha256hex } from "../../core/crypto.server";
import { recordOrgEvent } from "../audit.server";
import type { MemberContext, OrgResult } from "../organizations.server";
import { atLeast } from "../roles";

/** What a token starts with: recognisable in a secret scanner, and never a session cookie. */
export const SCIM_TOKEN_PREFIX = "vscim_";
export const SCIM_TOKEN_NAME_MAX = 100;
/** A token's last use is written at most this often (a busy directory sync is many requests a minute). */
const LAST_USE_RESOLUTION_MS = 60_000;

export type ScimTokenRow = { id: string; name: string; createdAt: string; lastUsedAt: string | null };

export async function createScimToken(ctx: MemberContext, name: string): Promise<OrgResult<{ token: ScimTokenRow & { secret: string } }>> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > SCIM_TOKEN_NAME_MAX) return { ok: false, reason: "invalid" };
  const secret = `${SCIM_TOKEN_PREFIX}${randomToken(32)}`;
  const row = await db().$transaction(async (tx) => {
    const created = await tx.scimToken.create({ data: { organizationId: ctx.organization.id, name: trimmed, tokenHash: sha256hex(secret), createdById: ctx.membership.userId } });
    await recordOrgEvent(tx, ctx.organization.id, ctx.actor, "scim-token-created", { tokenId: created.id, name: trimmed });
    return created;
  });
  return { ok: true, token: { id: row.id, name: row.name, createdAt: row.createdAt.toISOString(), lastUsedAt: null, secret } };
}

/** The organization's tokens that still work, newest first (admins and owners see them). */
export async function listScimTokens(organizationId: string): Promise<ScimTokenRow[]> {
  const rows = await db().scimToken.findMany({ where: { organizationId, revokedAt: null }, orderBy: { createdAt: "desc" } });
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.createdAt.toISOString(), lastUsedAt: r.lastUsedAt?.toISOString() ?? null }));
}

export async function revokeScimToken(ctx: MemberContext, tokenId: string): Promise<OrgResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  return db().$transaction(async (tx): Promise<OrgResult> => {
    const { count } = await tx.scimToken.updateMany({ where: { id: tokenId, organizationId: ctx.organization.id, revokedAt: null }, data: { revokedAt: new Date() } });
    if (count === 0) return { ok: false, reason: "not-found" };
    await recordOrgEvent(tx, ctx.organization.id, ctx.actor, "scim-token-revoked", { tokenId });
    return { ok: true };
  });
}

/** The organization an `Authorization: Bearer` header's token belongs to, or null (absent, unknown, revoked). */
export async function organizationOfToken(authorization: string | null, now = new Date()): Promise<{ organizationId: string; tokenId: string } | null> {
  const match = /^Bearer ([A-Za-z0-9_\-]{10,200})$/i.exec(authorization?.trim() ?? "");
  if (!match?.[1]?.startsWith(SCIM_TOKEN_PREFIX)) return null;
  const row = await db().scimToken.findUnique({ where: { tokenHash: sha256hex(match[1]) }, select: { id: true, organizationId: true, revokedAt: true, lastUsedAt: true } });
  if (!row || row.revokedAt) return null;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USE_RESOLUTION_MS) {
    await db().scimToken.updateMany({ where: { id: row.id }, data: { lastUsedAt: now } });
  }
  return { organizationId: row.organizationId, tokenId: row.id };
}
