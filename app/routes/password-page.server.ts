// The sign-up, forgotten-password and new-password routes answer the same way: a Response
// (redirect, or the unknown-action 400) as it is, or the form again with its status.
import { data } from "react-router";
import { headersWith } from "~/auth/core";
import type { Answer } from "~/auth/passwords";

export function passwordPageAnswer<Values>(answer: Answer<Values>) {
  if (answer.kind === "response") return answer.response;
  const headers = headersWith(answer.setCookies);
  if (answer.retryAfterSeconds !== undefined) headers.set("Retry-After", String(answer.retryAfterSeconds));
  const { kind: _kind, setCookies: _setCookies, status, retryAfterSeconds: _retry, ...page } = answer;
  return data(page, { status, headers });
}
