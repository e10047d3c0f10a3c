// Invitations (docs/features/organizations.md, ADR 147): an admin invites an address with a role no
// higher than their own. The e-mail carries a single-use link (its token kept only as a keyed
// hash, like every e-mailed link) that lives 7 days. Taking it needs a signed-in account whose
// VERIFIED address is the invited one: an account that registered the address without proving it,
// or any other account the link was forwarded to, is told the invitation is for another address
// and nothing changes. Revocable; resent at most INVITATION_MAX_SENDS times, not more often than
// every INVITATION_RESEND_INTERVAL seconds; new invitations per organization are rate-limited.
import { db } from "../../db/client.server";
import { isWellFormedLinkToken, linkTokenHash, linkTokenHashes, newLinkToken } from "../core/crypto.server";
import { normalizeEmailAddress } from "../core/email-address";
import { countHit, type LimitRefusal } from "../core/limits.server";
import { log } from "../core/log.server";
import type { AuthRequest } from "../core/request.server";
import { getMailer } from "../../mail/mailer.server";
import { invitationMessage } from "../../mail/templates.server";
import { inRecipientLanguage } from "../../i18n/user-locale.server";
import { recordOrgEvent, type OrgActor } from "./audit.server";
import { addMemberIn, type MemberContext } from "./organizations.server";
import { atLeast, isOrgRole, type OrgRole } from "./roles";

/** An invitation's lifetime: 7 days. */
export const INVITATION_MAX_AGE = 7 * 24 * 60 * 60;
/** The first send and at most four resends. */
export const INVITATION_MAX_SENDS = 5;
/** The shortest wait between two sends of one invitation, in seconds. */
export const INVITATION_RESEND_INTERVAL = 60;
/** The path of an invitation's link and its page. */
export const INVITATION_PATH = "/orgs/invitation";

export type InvitationRefusal =
  | "invalid-address"
  | "invalid-role"
  | "forbidden"
  | "already-invited"
  | "already-member"
  | "not-found"
  | "too-many-sends"
  | "too-soon"
  | "mail-unavailable"
  | "mail-failed";
export type InvitationResult = { ok: true } | { ok: false; reason: InvitationRefusal } | { ok: false; reason: "rate-limited"; refusal: LimitRefusal };

function openWhere(now: Date) {
  return { acceptedAt: null, revokedAt: null, expires: { gt: now } };
}

function invitationLink(ar: AuthRequest, token: string): string {
  return `${ar.origin}${INVITATION_PATH}?${new URLSearchParams({ token })}`;
}

/** Sends the invitation e-mail, in the invited account's language when it has one, else the inviter's. */
async function sendInvitation(ar: AuthRequest, ctx: MemberContext, to: string, role: OrgRole, token: string, inviterName: string | null): Promise<"sent" | "mail-unavailable" | "mail-failed"> {
  const mailer = getMailer(ar.config);
  if (!mailer) return "mail-unavailable";
  try {
    const message = await inRecipientLanguage({ address: to }, "request", () =>
      invitationMessage({ to, url: invitationLink(ar, token), host: new URL(ar.origin).host, organization: ctx.organization.name, inviter: inviterName, role, maxAgeSeconds: INVITATION_MAX_AGE }),
    );
    await mailer.send({ ...message, purpose: "org-invitation" });
    return "sent";
  } catch (error) {
    log("warn", "org-invitation-not-sent", { cause: error, organizationId: ctx.organization.id });
    return "mail-failed";
  }
}

async function inviterName(userId: string): Promise<string | null> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { name: true, email: true } });
  return user?.name ?? user?.email ?? null;
}

export async function inviteMember(ar: AuthRequest, ctx: MemberContext, input: { email: unknown; role: unknown }, now = new Date()): Promise<InvitationResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const address = normalizeEmailAddress(input.email);
  if (!address.ok) return { ok: false, reason: "invalid-address" };
  if (!isOrgRole(input.role)) return { ok: false, reason: "invalid-role" };
  const role = input.role;
  // Never a role above the inviter's own (an admin cannot make an owner by invitation).
  if (!atLeast(ctx.membership.role, role)) return { ok: false, reason: "forbidden" };
  const email = address.address;
  const organizationId = ctx.organization.id;
  if (await db().invitation.count({ where: { organizationId, email, ...openWhere(now) } })) return { ok: false, reason: "already-invited" };
  if (await db().membership.count({ where: { organizationId, user: { email } } })) return { ok: false, reason: "already-member" };
  const refusal = await countHit(ar.config.rateLimits, "ORG_INVITE", organizationId);
  if (refusal) return { ok: false, reason: "rate-limited", refusal };
  if (!getMailer(ar.config)) return { ok: false, reason: "mail-unavailable" };

  const token = newLinkToken();
  const row = await db().invitation.create({
    data: { organizationId, email, role, tokenHash: linkTokenHash(token, ar.config.secrets[0]), expires: new Date(now.getTime() + INVITATION_MAX_AGE * 1000), invitedById: ctx.membership.userId, lastSentAt: now },
    select: { id: true },
  });
  const sent = await sendInvitation(ar, ctx, email, role, token, await inviterName(ctx.membership.userId));
  if (sent !== "sent") {
    await db().invitation.deleteMany({ where: { id: row.id } });
    return { ok: false, reason: sent };
  }
  await recordOrgEvent(db(), organizationId, ctx.actor, "invitation-sent", { invitationId: row.id, email, role });
  return { ok: true };
}

/** Sends an open invitation again with a new link (the old one stops working) and a new 7 days. */
export async function resendInvitation(ar: AuthRequest, ctx: MemberContext, invitationId: string, now = new Date()): Promise<InvitationResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const organizationId = ctx.organization.id;
  const row = await db().invitation.findFirst({ where: { id: invitationId, organizationId, ...openWhere(now) } });
  if (!row || !isOrgRole(row.role)) return { ok: false, reason: "not-found" };
  if (!atLeast(ctx.membership.role, row.role)) return { ok: false, reason: "forbidden" };
  if (row.sendCount >= INVITATION_MAX_SENDS) return { ok: false, reason: "too-many-sends" };
  if (now.getTime() - row.lastSentAt.getTime() < INVITATION_RESEND_INTERVAL * 1000) return { ok: false, reason: "too-soon" };
  const token = newLinkToken();
  // Claimed with its state as read: of two resends at once, one sends.
  const { count } = await db().invitation.updateMany({
    where: { id: row.id, sendCount: row.sendCount, ...openWhere(now) },
    data: { tokenHash: linkTokenHash(token, ar.config.secrets[0]), sendCount: row.sendCount + 1, lastSentAt: now, expires: new Date(now.getTime() + INVITATION_MAX_AGE * 1000) },
  });
  if (count === 0) return { ok: false, reason: "not-found" };
  const sent = await sendInvitation(ar, ctx, row.email, row.role, token, await inviterName(ctx.membership.userId));
  if (sent !== "sent") return { ok: false, reason: sent };
  await recordOrgEvent(db(), organizationId, ctx.actor, "invitation-resent", { invitationId: row.id, email: row.email, sends: row.sendCount + 1 });
  return { ok: true };
}

export async function revokeInvitation(ctx: MemberContext, invitationId: string, now = new Date()): Promise<InvitationResult> {
  if (!atLeast(ctx.membership.role, "admin")) return { ok: false, reason: "forbidden" };
  const organizationId = ctx.organization.id;
  const row = await db().invitation.findFirst({ where: { id: invitationId, organizationId, acceptedAt: null, revokedAt: null }, select: { id: true, email: true } });
  if (!row) return { ok: false, reason: "not-found" };
  await db().$transaction(async (tx) => {
    await tx.invitation.updateMany({ where: { id: row.id, acceptedAt: null, revokedAt: null }, data: { revokedAt: now } });
    await recordOrgEvent(tx, organizationId, ctx.actor, "invitation-revoked", { invitationId: row.id, email: row.email });
  });
  return { ok: true };
}

export type InvitationRow = { id: string; email: string; role: string; expires: string; sendCount: number; canResend: boolean };

/** The organization's open invitations, newest first. */
export async function listOpenInvitations(organizationId: string, now = new Date()): Promise<InvitationRow[]> {
  const rows = await db().invitation.findMany({ where: { organizationId, ...openWhere(now) }, orderBy: { createdAt: "desc" } });
  return rows.map((r) => ({ id: r.id, email: r.email, role: r.role, expires: r.expires.toISOString(), sendCount: r.sendCount, canResend: r.sendCount < INVITATION_MAX_SENDS }));
}

async function findOpenByToken(token: unknown, secrets: readonly string[], now: Date) {
  if (!isWellFormedLinkToken(token)) return null;
  return db().invitation.findFirst({
    where: { tokenHash: { in: linkTokenHashes(token, secrets) }, ...openWhere(now) },
    select: { id: true, email: true, role: true, organizationId: true, organization: { select: { name: true, slug: true } } },
  });
}

export type InvitationPage =
  | { state: "invalid" }
  | { state: "wrong-address" }
  | { state: "unverified" }
  | { state: "open"; organization: string; role: OrgRole }
  | { state: "member"; organization: string; slug: string };

/**
 * A used link opened again by the account that used it (Back after joining, the e-mail clicked
 * twice): that account is told it is a member, with the way in. Anyone else learns nothing.
 */
async function joinedBy(token: unknown, userId: string, secrets: readonly string[]): Promise<InvitationPage | null> {
  if (!isWellFormedLinkToken(token)) return null;
  const used = await db().invitation.findFirst({
    where: { tokenHash: { in: linkTokenHashes(token, secrets) }, acceptedById: userId },
    select: { organizationId: true, organization: { select: { name: true, slug: true } } },
  });
  if (!used) return null;
  const still = await db().membership.findFirst({ where: { organizationId: used.organizationId, userId }, select: { id: true } });
  return still ? { state: "member", organization: used.organization.name, slug: used.organization.slug } : null;
}

/**
 * What the invitation page shows to `userId`: the organization and the role when the link is open
 * and this account may take it; otherwise why not, without naming the invited address to another account.
 */
export async function invitationFor(token: unknown, userId: string, secrets: readonly string[], now = new Date()): Promise<InvitationPage> {
  const row = await findOpenByToken(token, secrets, now);
  if (!row) return (await joinedBy(token, userId, secrets)) ?? { state: "invalid" };
  if (!isOrgRole(row.role)) return { state: "invalid" };
  const user = await db().user.findUnique({ where: { id: userId }, select: { email: true, emailVerified: true } });
  if (user?.email !== row.email) return { state: "wrong-address" };
  if (!user.emailVerified) return { state: "unverified" };
  return { state: "open", organization: row.organization.name, role: row.role };
}

export type AcceptResult = { ok: true; organization: { id: string; slug: string; name: string } } | { ok: false; reason: "invalid" | "wrong-address" | "unverified" };

/**
 * Takes the invitation for the signed-in `userId`: only when the account's address is the invited
 * one and verified. Single use under concurrent presses: the row is claimed by one conditional update.
 */
export async function acceptInvitation(token: unknown, userId: string, actor: OrgActor, secrets: readonly string[], now = new Date()): Promise<AcceptResult> {
  const page = await invitationFor(token, userId, secrets, now);
  if (page.state !== "open") return { ok: false, reason: page.state === "member" ? "invalid" : page.state };
  const row = (await findOpenByToken(token, secrets, now))!;
  return db().$transaction(async (tx): Promise<AcceptResult> => {
    const { count } = await tx.invitation.updateMany({ where: { id: row.id, ...openWhere(now) }, data: { acceptedAt: now, acceptedById: userId } });
    if (count === 0) return { ok: false, reason: "invalid" };
    await addMemberIn(tx, row.organizationId, userId, row.role as OrgRole, actor);
    await recordOrgEvent(tx, row.organizationId, actor, "invitation-accepted", { invitationId: row.id, email: row.email, role: row.role });
    const org = await tx.organization.findUniqueOrThrow({ where: { id: row.organizationId }, select: { id: true, slug: true, name: true } });
    return { ok: true, organization: org };
  });
}
