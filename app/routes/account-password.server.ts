// The /account action's password intents, kept here so account.server.ts
// only dispatches: app/auth/passwords answers in plain data, this wraps it for the page.
import { data, redirect } from "react-router";
import { accountNoticeAt } from "~/components/account-sections";
import { headersWith, type AuthRequest } from "~/auth/core";
import type { CurrentSession } from "~/auth/core/session.server";
import { passwordIntent, type PasswordIntentResult } from "~/auth/passwords";
import { answersInPlace, passwordRefusedRedirect } from "./account-refusal.server";

type Intent = Extract<PasswordIntentResult, { ok: false }>["intent"];

export async function passwordIntentResponse(ar: AuthRequest, session: CurrentSession, intent: Intent, body: Record<string, unknown>) {
  const result = await passwordIntent(ar, session, intent, body);
  if (result.ok) throw redirect(accountNoticeAt(result.notice), { headers: headersWith(result.setCookies) });
  // A browser is sent back to the page, which names the refusal (account-refusal.server.ts).
  if (result.refused && result.status === 400 && !answersInPlace(ar, body)) throw passwordRefusedRedirect(result.intent, result.refused);
  const headers = new Headers();
  if (result.retryAfterSeconds !== undefined) headers.set("Retry-After", String(result.retryAfterSeconds));
  return data(
    {
      formError: result.field ? null : result.message,
      fieldErrors: result.field ? { [result.field]: result.message } : {},
      passwordIntent: result.intent,
    },
    { status: result.status, headers },
  );
}
