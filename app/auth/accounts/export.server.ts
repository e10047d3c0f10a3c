// "Download my data" (ADR 086): what Vestibule holds about one user, as a JSON file.
// Every field is picked by name (an allow-list): a column added later stays out until someone
// decides it belongs, so no password hash, token (hash or sealed), TOTP secret, recovery code,
// passkey credential material or session token ever reaches the file — and the queries all
// filter by the user's id, so nobody else's rows can; an admin's address in an event about the
// user is the admin's, and stays out too (audit.server.ts ownersView).
import { db } from "../../db/client.server";
import { ownersView } from "./audit.server";

export const EXPORT_FORMAT = "vestibule-account-export";

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** The export of the user with this id; null when there is none. `currentSessionId` marks this device's session. */
export async function accountExport(userId: string, { currentSessionId = null as string | null, now = new Date() } = {}) {
  const user = await db().user.findUnique({
    where: { id: userId },
    select: {
      id: true,
      name: true,
      email: true,
      emailVerified: true,
      image: true,
      role: true,
      createdAt: true,
      updatedAt: true,
      password: { select: { updatedAt: true } },
      accounts: { select: { provider: true, type: true, providerAccountId: true, scope: true, createdAt: true }, orderBy: { createdAt: "asc" } },
      passkeys: { select: { name: true, deviceType: true, backedUp: true, transports: true, createdAt: true, lastUsedAt: true }, orderBy: { createdAt: "asc" } },
      twoFactor: { select: { confirmedAt: true } },
      recoveryCodes: { where: { usedAt: null }, select: { id: true } },
      sessions: {
        where: { expires: { gt: now }, revokedAt: null },
        select: { id: true, kind: true, method: true, factors: true, userAgent: true, createdAt: true, lastUsedAt: true, expires: true },
        orderBy: { createdAt: "asc" },
      },
    },
  });
  if (!user) return null;
  const events = await db().authEvent.findMany({
    where: { userId },
    orderBy: [{ at: "asc" }, { id: "asc" }],
    select: { type: true, at: true, ip: true, userAgent: true, detail: true },
  });
  const secondFactorOn = user.twoFactor?.confirmedAt != null;
  return {
    format: EXPORT_FORMAT,
    version: 1,
    exportedAt: now.toISOString(),
    profile: {
      id: user.id,
      name: user.name,
      email: user.email,
      emailVerified: iso(user.emailVerified),
      image: user.image,
      role: user.role,
      createdAt: iso(user.createdAt),
      updatedAt: iso(user.updatedAt),
    },
    waysToSignIn: {
      password: user.password ? { set: true, changedAt: iso(user.password.updatedAt) } : { set: false, changedAt: null },
      linkedAccounts: user.accounts.map((a) => ({ provider: a.provider, type: a.type, accountId: a.providerAccountId, scope: a.scope, linkedAt: iso(a.createdAt) })),
      passkeys: user.passkeys.map((p) => ({
        name: p.name,
        deviceType: p.deviceType,
        backedUp: p.backedUp,
        transports: p.transports ? p.transports.split(",") : [],
        addedAt: iso(p.createdAt),
        lastUsedAt: iso(p.lastUsedAt),
      })),
      secondFactor: {
        on: secondFactorOn,
        since: secondFactorOn ? iso(user.twoFactor!.confirmedAt) : null,
        recoveryCodesLeft: secondFactorOn ? user.recoveryCodes.length : 0,
      },
    },
    sessions: user.sessions.map((s) => ({
      id: s.id,
      current: s.id === currentSessionId,
      strategy: s.kind,
      method: s.method,
      factors: s.factors ? s.factors.split(" ") : [],
      device: s.userAgent,
      startedAt: iso(s.createdAt),
      lastUsedAt: iso(s.lastUsedAt),
      expiresAt: iso(s.expires),
    })),
    events: events.map(ownersView).map((e) => ({ type: e.type, at: iso(e.at), ip: e.ip, device: e.userAgent, detail: e.detail })),
  };
}

export type AccountExport = NonNullable<Awaited<ReturnType<typeof accountExport>>>;
