// The /account action's "change-email" intent, kept here so account.server.ts only dispatches.
import { data } from "react-router";
import { db } from "../db/client.server";
import { requestEmailChange } from "./email-change.server";
import type { AuthRequest } from "./request.server";

export async function changeEmailIntent(ar: AuthRequest, userId: string, body: Record<string, unknown>) {
  const user = await db().user.findUnique({ where: { id: userId }, select: { id: true, email: true, emailVerified: true } });
  if (!user) return data({ formError: "Your account no longer exists.", fieldErrors: {} }, { status: 404 });
  const result = await requestEmailChange(ar, user, body.email);
  if (!result.ok) return data({ formError: null, fieldErrors: { email: result.error } }, { status: result.status });
  return data({ formError: null, fieldErrors: {}, emailSentTo: result.address });
}
