// The sign-up, forgotten-password and new-password routes answer the same way: a Response
// (redirect, or the unknown-action 400) as it is, or the form again with its status — thrown, so
// that the page is drawn by the route's ErrorBoundary from this answer alone. A returned 400 would
// have React Router run the route's loader again for the document (a GET of the action's URL), and
// /auth/reset-password's loader sends a request without a live link to the error page.
import { data } from "react-router";
import { headersWith } from "~/auth/core";
import type { Answer } from "~/auth/passwords";

export function passwordPageAnswer<Values>(answer: Answer<Values>) {
  if (answer.kind === "response") return answer.response;
  const headers = headersWith(answer.setCookies);
  if (answer.retryAfterSeconds !== undefined) headers.set("Retry-After", String(answer.retryAfterSeconds));
  const { kind: _kind, setCookies: _setCookies, status, retryAfterSeconds: _retry, ...page } = answer;
  throw data(page, { status, headers });
}
