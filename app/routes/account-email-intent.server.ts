// The /account action's "change-email" intent, kept here so account.server.ts only dispatches. A
// route-level helper (like account-links.server.ts): the core's requestEmailChange answers in
// plain data, and this wraps it in react-router's data() for the page.
import { data } from "react-router";
import { t } from "~/i18n/t.server";
import { type AuthRequest } from "~/auth/core";
import { requestEmailChange } from "~/auth/email";
import { db } from "~/db/client.server";
import { answersInPlace, refusedRedirect } from "./account-refusal.server";

export async function changeEmailIntent(ar: AuthRequest, userId: string, body: Record<string, unknown>) {
  const user = await db().user.findUnique({ where: { id: userId }, select: { id: true, email: true, emailVerified: true } });
  if (!user) return data({ formError: t("common.accountGone"), fieldErrors: {} }, { status: 404 });
  const result = await requestEmailChange(ar, user, body.email);
  // A refused address: a browser is sent back to the page, which names the reason (account-refusal.server.ts).
  if (!result.ok && result.refused && !answersInPlace(ar, body)) throw refusedRedirect(result.refused, "change-email");
  if (!result.ok) return data({ formError: null, fieldErrors: { email: result.error } }, { status: result.status });
  return data({ formError: null, fieldErrors: {}, emailSentTo: result.address });
}
