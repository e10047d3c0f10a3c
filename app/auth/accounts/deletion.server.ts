// Deleting an account (ADR 086): the one operation behind "Delete my account" on
// /account, `npm run user:delete` and the admin console. What is personal goes in one database
// transaction — the user and, by cascade, their ways in (accounts, password, passkeys, second
// factor, recovery codes), sessions and cut-off; the e-mail requests pending for the address or
// the user (links, codes, sign-up hashes); the mail queued for the address; the client address and
// device of their audit events, which keep the user id (AuthEvent.userId is no foreign key). A
// failure anywhere in it leaves the account whole. After the commit: every session is refused on
// every instance (a revocation note per session, which outlives the user, announced as `sessions`
// and `user-deleted`), the sign-in methods revoke what they hold at providers (the hooks; OAuth:
// RFC 7009), and a security e-mail goes to the address captured before the deletion.
// The limit counters stay: keyed by a hash, they expire on their own, and deleting them would let
// anyone reset their limits by deleting and signing up again.
import { db } from "../../db/client.server";
import { isLocale } from "../../i18n/languages.server";
import type { AuthConfig } from "../core/config.server";
import { log } from "../core/log.server";
import type { AuthRequest } from "../core/request.server";
import { announceUserEnded, revokedHere } from "../core/revocation.server";
import { forgetUserSessions } from "../core/session-cache.server";
import { queueAppLogouts, wakeAppLogouts } from "../core/session-apps.server";
import { actorEventFields, isOperator, type Actor } from "./actor";
import { recordEvent } from "./audit.server";
import { holdRoleLock, isLastAdminIn } from "./roles.server";
import { notifySecurityChange, sendQueuedNotices } from "./security-notices.server";

/** A deleted account's provider tokens as stored (sealed), for the hooks to revoke. */
export type DeletedAccount = {
  provider: string;
  providerAccountId: string;
  accessToken: string | null;
  refreshToken: string | null;
};

/**
 * Work a sign-in method does once a user is deleted (revoking the tokens it held at a provider).
 * Runs after the commit; must not throw (a provider that cannot be reached is logged and skipped).
 */
export type AccountDeletedHook = (config: AuthConfig, accounts: readonly DeletedAccount[]) => Promise<void>;

export type DeleteAccountResult = { ok: true; userId: string; email: string | null; sessionsEnded: number } | { ok: false; reason: "not-found" | "last-admin" | "last-owner" };

export type DeleteAccountOptions = {
  /** The sign-in methods' hooks (signin/registry.server.ts accountDeletedHooks). */
  hooks: readonly AccountDeletedHook[];
  /** The request the deletion came from (or one standing for the site, from the command line): the notice's links and language. */
  ar: AuthRequest;
  now?: Date;
};

type Tx = Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0];

/** Whether the user is the only owner of some organization (a plain query: accounts/ sees no organizations/ code). */
async function isOnlyOwnerIn(tx: Tx, userId: string): Promise<boolean> {
  const owned = await tx.membership.findMany({ where: { userId, role: "owner" }, select: { organizationId: true } });
  if (!owned.length) return false;
  const others = await tx.membership.groupBy({ by: ["organizationId"], where: { organizationId: { in: owned.map((m) => m.organizationId) }, role: "owner", userId: { not: userId } } });
  return others.length < owned.length;
}

/** Deletes the user with this id and everything personal of theirs, as the header says. */
export async function deleteAccount(userId: string, actor: Actor, { hooks, ar, now = new Date() }: DeleteAccountOptions): Promise<DeleteAccountResult> {
  const deleted = await db().$transaction(async (tx) => {
    // The last administrator stays (nobody would be left to reach /admin): checked under the lock
    // every demotion takes too, so two deletions (or a deletion and a demotion) of the last two
    // administrators at once cannot both pass (roles.server.ts).
    await holdRoleLock(tx, userId);
    if (await isLastAdminIn(tx, userId)) return "last-admin" as const;
    // An organization always keeps one owner (docs/features/organizations.md, ADR 146): its only
    // owner names another one, or deletes the organization, before deleting their account.
    if (await isOnlyOwnerIn(tx, userId)) return "last-owner" as const;
    const user = await tx.user.findUnique({
      where: { id: userId },
      select: {
        email: true,
        locale: true,
        accounts: { select: { provider: true, providerAccountId: true, accessToken: true, refreshToken: true } },
        sessions: { where: { expires: { gt: now } }, select: { id: true, expires: true, revokedAt: true } },
      },
    });
    if (!user) return null;
    // Each session's note outlives the user (no foreign key): the poll of every instance, and a
    // fresh one's full load, find it there once the Session rows are gone.
    for (const s of user.sessions) {
      await tx.sessionRevocation.upsert({
        where: { sessionId: s.id },
        create: { sessionId: s.id, revokedAt: now, expires: s.expires },
        update: { revokedAt: now, expires: s.expires },
      });
    }
    await tx.verificationToken.deleteMany({ where: { OR: [{ userId }, ...(user.email ? [{ identifier: user.email }] : [])] } });
    if (user.email) await tx.mailQueue.deleteMany({ where: { recipient: user.email } });
    // What the user allowed apps through the OAuth provider (ADR 135): grants, refresh tokens,
    // codes, provider sessions, and the refresh answers kept for those grants. By table: the
    // provider's rows name the user in accountId.
    const grants = (await tx.oAuthPayload.findMany({ where: { kind: "Grant", accountId: userId }, select: { id: true } })).map((g) => g.id);
    await tx.oAuthPayload.deleteMany({ where: { OR: [{ accountId: userId }, ...(grants.length ? [{ grantId: { in: grants } }] : [])] } });
    // The apps that got an ID token in one of the user's sessions are told (ADR 145).
    await queueAppLogouts(tx, user.sessions.filter((s) => s.revokedAt === null).map((s) => s.id));
    await tx.oAuthPairwiseSubject.deleteMany({ where: { userId } });
    await tx.authEvent.updateMany({ where: { userId }, data: { ip: null, userAgent: null } });
    await tx.user.delete({ where: { id: userId } });
    return user;
  });
  if (!deleted) return { ok: false, reason: "not-found" };
  if (deleted === "last-admin" || deleted === "last-owner") return { ok: false, reason: deleted };

  wakeAppLogouts();
  revokedHere(deleted.sessions);
  forgetUserSessions(userId);
  announceUserEnded("user-deleted", userId);
  const sessionsEnded = deleted.sessions.filter((s) => s.revokedAt === null).length;
  // The event of the deletion itself carries no address either: the actor's (an admin's) only.
  await recordEvent("user-deleted", actorEventFields(actor, userId, { count: sessionsEnded }));
  await Promise.all(
    hooks.map((hook) =>
      hook(ar.config, deleted.accounts).catch((error: unknown) => log("warn", "account-deleted-hook-failed", { error })),
    ),
  );
  if (deleted.email) {
    // In the owner's language, read with the row (ADR 108).
    const locale = isLocale(deleted.locale) ? deleted.locale : null;
    await notifySecurityChange(ar, userId, { kind: "account-deleted" }, { recipients: [deleted.email], now, byOperator: isOperator(actor), locale });
    sendQueuedNotices();
  }
  return { ok: true, userId, email: deleted.email, sessionsEnded };
}

/** How long a deleted account's own browser is still answered with the deletion (a second post of a double click, a reload). */
const DELETED_BY_SESSION_WINDOW_MS = 10 * 60_000;

/**
 * Whether the session cookie with this digest (sessionCookieDigest) deleted its own account in the
 * last minutes: its rows are gone, so only the deletion's audit event still names it.
 */
export async function deletedBySession(digest: string | null, now = new Date()): Promise<boolean> {
  if (!digest || !/^[0-9a-f]{64}$/.test(digest)) return false;
  const found = await db().authEvent.findFirst({
    where: { type: "user-deleted", at: { gte: new Date(now.getTime() - DELETED_BY_SESSION_WINDOW_MS) }, detail: { contains: `"session":"${digest}"` } },
    select: { id: true },
  });
  return found !== null;
}
