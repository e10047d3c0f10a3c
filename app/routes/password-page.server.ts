// The sign-up, forgotten-password and new-password pages, answered in one way:
//
// - GET: the form, with the CSRF token and what the page's data function gave.
// - A form POST: a Response (redirect, or the unknown-action 400) as it is, a refusal's redirect
//   back to its page when it has one (`again`), or the form again with
//   its status — thrown, so that the page is drawn by the route's ErrorBoundary from this answer
//   alone. A returned 400 would have React Router run the route's loader again for the document
//   (a GET of the action's URL), and /auth/reset-password's loader sends a request without a live
//   link to the error page.
// - A JSON-mode POST (`X-Auth-Return-Redirect: 1`, `json=true`), answered by route middleware
//   before rendering starts: the redirect as `{url}`, a refused form as JSON with its status
//   (`formError`, `fieldErrors`, `values`), never the HTML page.
import { data } from "react-router";
import { headersWith, jsonRedirectMiddleware } from "~/auth/core";
import type { Answer, FormAnswer } from "~/auth/passwords";

function answerHeaders(answer: FormAnswer<unknown>, headers = headersWith(answer.setCookies)) {
  if (answer.retryAfterSeconds !== undefined) headers.set("Retry-After", String(answer.retryAfterSeconds));
  return headers;
}

function pageOf<Values>(answer: FormAnswer<Values>) {
  const { kind: _kind, setCookies: _setCookies, status: _status, retryAfterSeconds: _retry, again: _again, ...page } = answer;
  return page;
}

export function passwordPageAnswer<Values>(answer: Answer<Values>) {
  if (answer.kind === "response") return answer.response;
  if (answer.again) return answer.again;
  throw data(pageOf(answer), { status: answer.status, headers: answerHeaders(answer) });
}

export function passwordPageJson<Values>(answer: Answer<Values>): Response {
  if (answer.kind === "response") return answer.response;
  const headers = answerHeaders(answer);
  headers.set("Content-Type", "application/json");
  headers.set("Cache-Control", "private, no-cache, no-store");
  return new Response(JSON.stringify(pageOf(answer)), { status: answer.status, headers });
}

/**
 * The route's `headers`: a refused POST's Retry-After (a 429 over the send limits) reaches the
 * document answer, which React Router builds from this function rather than from the thrown answer.
 */
export function passwordPageHeaders({ parentHeaders, errorHeaders }: { parentHeaders: Headers; errorHeaders?: Headers }, noStore = false) {
  const headers = new Headers(parentHeaders);
  const retryAfter = errorHeaders?.get("Retry-After");
  if (retryAfter) headers.set("Retry-After", retryAfter);
  // A page that holds a live token is never cached.
  if (noStore) headers.set("Cache-Control", "private, no-store");
  return headers;
}

/** The GET's data: the form, with a refusal a redirect named (`fieldErrors`) or nothing refused yet. */
export function passwordPageData<Values>(page: { csrfToken: string; setCookies: string[]; values: Values }, fieldErrors: Record<string, string> = {}) {
  return data({ csrfToken: page.csrfToken, values: page.values, formError: null as string | null, fieldErrors }, { headers: headersWith(page.setCookies) });
}

/** A password page's POST handlers: the action (form posts) and the middleware (JSON-mode posts). */
export function passwordPagePost<Values>(run: (request: Request) => Promise<Answer<Values>>) {
  return {
    action: async ({ request }: { request: Request }) => passwordPageAnswer(await run(request)),
    middleware: [jsonRedirectMiddleware(async (request) => passwordPageJson(await run(request)))],
  };
}
