// A JSON client's name changes on /account — the profile name and a passkey's name (ADR 108) —
// answered as JSON (X-Auth-Return-Redirect: 1 or json=true) before the page would render around
// the action's answer: `{ok: true, url}` when saved, `{error, message, fieldErrors}` with the
// form's status when refused (the one name rule's reason, the limit in words for one too long).
// The same action runs for both shapes. A POST that is not signed in or carries a wrong CSRF
// token goes on to the action, which answers it as it answers every other.
import { jsonResponse, wantsJsonRedirect } from "~/auth/core/respond.server";
import { accountAction } from "./account.server";
import { postBody, signedInWithCsrf } from "./account-reauth.server";

const NAME_INTENTS: ReadonlySet<unknown> = new Set(["update-profile", "passkey-rename"]);

type FormAnswer = { data?: { formError?: string | null; fieldErrors?: Record<string, string> }; init?: ResponseInit | null };

export async function accountNamesJsonMiddleware({ request }: { request: Request }, next: () => Promise<Response>): Promise<Response> {
  const body = await postBody(request);
  if (!body || !NAME_INTENTS.has(body.intent) || !wantsJsonRedirect(request, body)) return next();
  if (!(await signedInWithCsrf(request, body))) return next();
  let answer: FormAnswer;
  try {
    answer = (await accountAction(request)) as FormAnswer;
  } catch (thrown) {
    if (thrown instanceof Response && thrown.status >= 300 && thrown.status < 400) {
      const url = new URL(thrown.headers.get("Location") ?? "/account", request.url).href;
      return jsonResponse({ ok: true, url }, { setCookies: thrown.headers.getSetCookie(), noCache: true });
    }
    throw thrown;
  }
  const status = answer.init?.status ?? 400;
  const fieldErrors = answer.data?.fieldErrors ?? {};
  const field = body.intent === "passkey-rename" ? "passkeyName" : "name";
  const message = fieldErrors[field] ?? answer.data?.formError ?? null;
  const error = status === 404 ? "NotFound" : fieldErrors[field] ? "InvalidName" : "InvalidRequest";
  return jsonResponse({ error, message, ...(fieldErrors[field] ? { field } : {}) }, { status, noCache: true });
}
