// /account's "Delete my account" (intent account-delete) and "Download my data" (account-export),
// ADR 086. Both need a recent sign-in (account-reauth.server.ts refuses them before
// this runs). The deletion asks for the word the page shows, in the page's language; the export is
// a download. A JSON client (X-Auth-Return-Redirect: 1 / json=true) gets JSON for both, answered
// by the route middleware before the page would render around the action's answer.
import { data, redirect } from "react-router";
import { accountExport, deleteAccount, deletedBySession, eventSource, recordEvent } from "~/auth/accounts";
import { endSession, isRecentAuth, sessionCookieDigest, signedOutHeaders, type AuthRequest } from "~/auth/core";
import { authRequest } from "~/auth/core/request.server";
import { type LimitRefusal } from "~/auth/core/limit-table";
import { countHit } from "~/auth/core/limits.server";
import { limitMessage } from "~/auth/core/messages.server";
import { jsonResponse, wantsJsonRedirect } from "~/auth/core/respond.server";
import { slot } from "~/auth/core/slot";
import { postBody, signedInWithCsrf } from "./account-reauth.server";
import type { CurrentSession } from "~/auth/core/session.server";
import { accountDeletedHooks } from "~/auth/signin";
import { t } from "~/i18n/t.server";
import { ACCOUNT_SECTION, noticeAnchor } from "~/components/account-sections";

/** Where a deleted user lands: the home page, which says the account is gone. */
export const DELETED_LANDING = "/?deleted=account";

/** The JSON error code of a deletion without the confirmation word. */
export const CONFIRMATION_REQUIRED = "ConfirmationRequired";

/**
 * The word typed to confirm is the one the page shows: the catalogue's, in the language of this
 * request (the page and its form post are in the same language). Surrounding spaces are forgiven
 * (a paste), case and letters are not. NFC on both sides: "Ö" typed as O and a combining mark
 * is still the word shown.
 */
export function confirmationWord(): string {
  return t("lifecycle.deleteWord");
}

/** Whether `typed` is the word shown (the admin console's deletion asks for the same word). */
export function isConfirmationWord(typed: unknown): boolean {
  return typeof typed === "string" && typed.trim().normalize("NFC") === confirmationWord().normalize("NFC");
}

/** The JSON error code of the last administrator's own deletion (ADR 077, 086). */
export const LAST_ADMIN = "LastAdmin";
/** The JSON error code of an organization's only owner's deletion (ADR 146). */
export const LAST_OWNER = "LastOwner";

type DeleteOutcome = { ok: true; setCookies: string[] } | { ok: false; reason: "word" | "last-admin" | "last-owner" };

async function runDeletion(ar: AuthRequest, session: CurrentSession, body: Record<string, unknown>): Promise<DeleteOutcome> {
  if (!isConfirmationWord(body.confirm)) return { ok: false, reason: "word" };
  const result = await deleteAccount(session.userId, { source: "self", session: sessionCookieDigest(ar) }, { hooks: accountDeletedHooks, ar });
  // The last administrator stays: nobody would be left to reach /admin.
  if (!result.ok && result.reason === "last-admin") return { ok: false, reason: "last-admin" };
  // An organization's only owner stays until they name another owner or delete it (ADR 146).
  if (!result.ok && result.reason === "last-owner") return { ok: false, reason: "last-owner" };
  // The sessions were ended with the user; this clears this browser's cookies as well.
  const ended = await endSession(ar);
  return { ok: true, setCookies: ended.setCookies };
}

/** The form post: signed out on the home page, or the page again with the word to type. */
export async function accountDeleteIntent(ar: AuthRequest, session: CurrentSession, body: Record<string, unknown>) {
  const outcome = await runDeletion(ar, session, body);
  if (outcome.ok) throw redirect(DELETED_LANDING, { headers: signedOutHeaders(outcome.setCookies) });
  if (outcome.reason === "last-admin") return data({ formError: t("admin.refused.lastAdminDelete"), fieldErrors: {} }, { status: 409 });
  if (outcome.reason === "last-owner") return data({ formError: t("org.refused.lastOwnerDelete"), fieldErrors: {} }, { status: 409 });
  // The word not typed: back to the page, which asks for it again in the section (Post/Redirect/Get;
  // a JSON client's deletion is answered by the middleware below).
  if (!wantsJsonRedirect(ar.request, body)) throw redirect(`/account?${new URLSearchParams({ refused: "deleteWord", intent: "account-delete" })}#${noticeAnchor(ACCOUNT_SECTION.deleteAccount)}`, 303);
  return data({ formError: null, fieldErrors: { confirm: t("lifecycle.deleteWrongWord", { word: confirmationWord() }) } }, { status: 400 });
}

/** Exports refused by ACCOUNT_EXPORT in the middleware, for the action to show on the page (a form post). */
const refusedExports = slot<Request, LimitRefusal>("refusedExport");

/** The form post of an export the middleware refused: the page again, with "Too many attempts". */
export function accountExportRefusal(request: Request) {
  const refused = refusedExports.get(request);
  if (!refused) return data({ formError: t("common.unknownRequest"), fieldErrors: {} }, { status: 400 });
  return data(
    { formError: limitMessage(refused), fieldErrors: {} },
    { status: 429, headers: { "Retry-After": String(refused.retryAfterSeconds) } },
  );
}

/** The download: `Content-Disposition: attachment`, never kept by a cache; or the limit's refusal. */
async function exportResponse(ar: AuthRequest, session: CurrentSession): Promise<Response | LimitRefusal> {
  const refused = await countHit(ar.config.rateLimits, "ACCOUNT_EXPORT", `account-export:${session.userId}`);
  if (refused) {
    await recordEvent("rate-limited", { userId: session.userId, ...eventSource(ar), detail: { bucket: refused.limit } });
    return refused;
  }
  const now = new Date();
  const file = await accountExport(session.userId, { currentSessionId: session.sessionId, now });
  if (!file) return jsonResponse({ error: "SessionRequired" }, { status: 401, noCache: true });
  await recordEvent("account-exported", { userId: session.userId, ...eventSource(ar) });
  const day = now.toISOString().slice(0, 10);
  return new Response(JSON.stringify(file, null, 2), {
    status: 200,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="account-data-${day}.json"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

const LIFECYCLE_INTENTS: ReadonlySet<unknown> = new Set(["account-delete", "account-export"]);

/**
 * Route middleware (after reauthJsonMiddleware, which already answered a stale JSON client): the
 * export for both shapes, and the deletion for a JSON client. Anything it does not answer — a bad
 * CSRF token, a stale sign-in, a form post of account-delete or of an export over its limit —
 * goes on to the action, which refuses or renders it as for every other intent.
 */
export async function accountLifecycleMiddleware({ request }: { request: Request }, next: () => Promise<Response>): Promise<Response> {
  const body = await postBody(request);
  if (!body || !LIFECYCLE_INTENTS.has(body.intent)) return next();
  const json = wantsJsonRedirect(request, body);
  if (body.intent === "account-delete") {
    // The second post of a double click (or a resend) finds no session: its own deletion ended
    // it. It gets the same confirmation as the first, and its cookies cleared.
    const ar = authRequest(request);
    if ((await deletedBySession(sessionCookieDigest(ar))) && !(await signedInWithCsrf(request, body))) {
      const ended = await endSession(ar);
      if (json) return jsonResponse({ url: `${ar.origin}${DELETED_LANDING}` }, { status: 200, setCookies: ended.setCookies, noCache: true });
      return redirect(DELETED_LANDING, { headers: signedOutHeaders(ended.setCookies) });
    }
    if (!json) return next();
  }
  const signedIn = await signedInWithCsrf(request, body);
  if (!signedIn || !(await isRecentAuth(signedIn.ar, signedIn.session))) return next();
  const { ar, session } = signedIn;
  if (body.intent === "account-export") {
    const answer = await exportResponse(ar, session);
    if (answer instanceof Response) return answer;
    if (!json) {
      // The page says so (the action reads the refusal): a form post gets a page, not a bare 429.
      refusedExports.set(request, answer);
      return next();
    }
    return jsonResponse(
      { error: "RateLimited", retryAfterSeconds: answer.retryAfterSeconds },
      { status: 429, noCache: true },
    );
  }
  const outcome = await runDeletion(ar, session, body);
  if (!outcome.ok && outcome.reason === "last-admin") {
    return jsonResponse({ error: LAST_ADMIN, message: t("admin.refused.lastAdminDelete") }, { status: 409, noCache: true });
  }
  if (!outcome.ok && outcome.reason === "last-owner") {
    return jsonResponse({ error: LAST_OWNER, message: t("org.refused.lastOwnerDelete") }, { status: 409, noCache: true });
  }
  if (!outcome.ok) {
    return jsonResponse({ error: CONFIRMATION_REQUIRED, word: confirmationWord(), message: t("lifecycle.deleteWrongWord", { word: confirmationWord() }) }, { status: 400, noCache: true });
  }
  return jsonResponse({ url: `${ar.origin}${DELETED_LANDING}` }, { status: 200, setCookies: outcome.setCookies, noCache: true });
}
