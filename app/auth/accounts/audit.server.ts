// The audit trail (AuthEvent rows). Writing it never breaks the flow that reports it.
import { db } from "../../db/client.server";
import { log } from "../core/log.server";

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
  | "rate-limited";

export async function recordEvent(
  type: AuthEventType,
  fields: { userId?: string | null; ip?: string | null; detail?: Record<string, unknown> } = {},
) {
  try {
    await db().authEvent.create({
      data: {
        type,
        userId: fields.userId ?? null,
        ip: fields.ip ?? null,
        detail: fields.detail ? JSON.stringify(fields.detail) : null,
      },
    });
  } catch (error) {
    log("error", "audit-write-failed", { type, error });
  }
}
