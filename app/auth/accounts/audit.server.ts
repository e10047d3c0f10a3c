// The audit trail (AuthEvent rows). Writing it never breaks the flow that reports it. Each row
// written also moves its /metrics series (core/metrics.server.ts).
import { db } from "../../db/client.server";
import { log } from "../core/log.server";
import { countEvent } from "../core/metrics.server";
import { clientAddress, type AuthRequest } from "../core/request.server";

const MAX_USER_AGENT = 512;
/** How many events /account shows. */
export const RECENT_EVENTS = 20;

export type AuthEventType =
  | "signin"
  | "signin-failed"
  | "signout"
  | "session-revoked"
  | "session-update"
  | "user-created"
  | "account-linked"
  | "account-unlinked"
  | "email-sent"
  | "email-changed"
  | "rate-limited"
  | "passkey-added"
  | "passkey-removed"
  | "passkey-renamed"
  | "two-factor-enabled"
  | "two-factor-disabled"
  | "two-factor-failed"
  | "recovery-code-used"
  | "recovery-codes-replaced"
  | "password-set"
  | "password-changed"
  | "password-removed"
  | "password-reset"
  | "role-changed"
  | "user-disabled"
  | "user-enabled"
  | "user-deleted"
  | "account-exported"
  | "sessions-ended"
  | "reauthenticated"
  // `npm run secret:reseal` (ADR 109): counts per kind of value sealed at rest, no user.
  | "secrets-resealed"
  // "This wasn't me" (ADR 081): detail.event names the change the owner reported.
  | "security-report"
  // The OAuth provider (docs/features/provider.md): a user allowed an app, an app's access ended,
  // an operator added or removed a client (no user).
  | "oauth-consent"
  | "oauth-grant-revoked"
  | "oauth-client-added"
  | "oauth-client-removed";

export async function recordEvent(
  type: AuthEventType,
  fields: { userId?: string | null; ip?: string | null; userAgent?: string | null; detail?: Record<string, unknown> } = {},
) {
  try {
    await db().authEvent.create({
      data: {
        type,
        userId: fields.userId ?? null,
        ip: fields.ip ?? null,
        userAgent: fields.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
        detail: fields.detail ? JSON.stringify(fields.detail) : null,
      },
    });
    // The metrics move with the rows, here and nowhere else (ADR 076): they never disagree.
    countEvent(type, fields.detail);
  } catch (error) {
    log("error", "audit-write-failed", { type, error });
  }
}

/** Where an event came from: the client address and the device (User-Agent) of the request. */
export function eventSource(ar: AuthRequest): { ip: string | null; userAgent: string | null } {
  return { ip: clientAddress(ar), userAgent: ar.request.headers.get("User-Agent") };
}

/** `factors`: what a sign-in proved (its detail's amr-like names), so its method is named truly; else empty. */
export type RecentEvent = { id: string; type: string; at: Date; ip: string | null; userAgent: string | null; provider: string | null; factors: string[]; credentialRef: string | null };

/** Who is looking at a user's events: the user themself (their account page, their export), or an operator. */
export type EventViewer = "owner" | "operator";

function parsedDetail(detail: string | null): Record<string, unknown> | null {
  if (!detail) return null;
  try {
    const parsed: unknown = JSON.parse(detail);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * An event as its own user sees it. One an admin caused through /admin (actor.ts) carries the
 * admin's client address, device and user id: the operators' audit trail keeps them, but they are
 * the admin's data, not the user's, so the user sees that an administrator acted and nothing more.
 */
export function ownersView<E extends { ip: string | null; userAgent: string | null; detail: string | null }>(event: E): Omit<E, "detail"> & { detail: Record<string, unknown> | null } {
  const detail = parsedDetail(event.detail);
  if (detail?.source !== "admin") return { ...event, detail };
  const { adminId: _adminId, ...rest } = detail;
  return { ...event, ip: null, userAgent: null, detail: rest };
}

/** The user's latest events, newest first; of each detail only the provider id and a sign-in's factors are shown. */
export async function recentEvents(userId: string, take = RECENT_EVENTS, viewer: EventViewer = "owner"): Promise<RecentEvent[]> {
  const rows = await db().authEvent.findMany({
    where: { userId },
    orderBy: [{ at: "desc" }, { id: "desc" }],
    take,
    select: { id: true, type: true, at: true, ip: true, userAgent: true, detail: true },
  });
  return rows.map((row) => {
    const { detail, ...r } = viewer === "owner" ? ownersView(row) : { ...row, detail: parsedDetail(row.detail) };
    return { ...r, provider: providerOf(detail), factors: factorsOf(detail), credentialRef: typeof detail?.credentialRef === "string" ? detail.credentialRef : null };
  });
}

function factorsOf(detail: Record<string, unknown> | null): string[] {
  return Array.isArray(detail?.factors) ? detail.factors.filter((f): f is string => typeof f === "string") : [];
}

function providerOf(detail: Record<string, unknown> | null): string | null {
  return typeof detail?.provider === "string" ? detail.provider : null;
}
