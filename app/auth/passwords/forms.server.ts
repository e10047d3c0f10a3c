// What the sign-up, forgotten-password and new-password pages share: reading the POST, the CSRF
// check, and the re-rendered form's shape (refused fields are a 400 with the
// typed values kept, passwords and codes never echoed; a POST without a valid token is a 403 that
// changes nothing).
import { readBody, type Body } from "../core/body.server";
import { toRelative } from "../core/callback-url.server";
import { ensureCsrfToken, verifyCsrf } from "../core/csrf.server";
import { authRequest, type AuthRequest } from "../core/request.server";
import { wantsJsonRedirect } from "../core/respond.server";
import { checkName } from "../core/display-text";
import { nameRefusalMessage } from "../core/messages.server";
import { t } from "../../i18n/t.server";

export type FieldErrors = Partial<Record<"email" | "name" | "password" | "code", string>>;

/** A page's form again: status, the error texts, and what was typed (never a password or code). */
export type FormAnswer<Values> = {
  kind: "form";
  status: number;
  csrfToken: string;
  setCookies: string[];
  formError: string | null;
  fieldErrors: FieldErrors;
  values: Values;
  retryAfterSeconds?: number;
  /**
   * A browser's answer instead (Post/Redirect/Get): a redirect back to the page the form lives on,
   * the refusal's words named in the query, so Back after the next try lands on a page, never on
   * the answer to a POST. JSON-mode clients get the form answer above, unchanged.
   */
  again?: Response;
};

export type Answer<Values> = { kind: "response"; response: Response } | FormAnswer<Values>;

export type ReadPost = { ar: AuthRequest; body: Body; json: boolean; csrfToken: string; setCookies: string[]; csrfOk: boolean };

/** Reads the body (a refused body answers as the form with 400) and checks the CSRF token. */
export async function readPost(request: Request): Promise<ReadPost | { refused: true; ar: AuthRequest; csrfToken: string; setCookies: string[] }> {
  const ar = authRequest(request);
  const csrf = ensureCsrfToken(ar);
  const setCookies = csrf.setCookie ? [csrf.setCookie] : [];
  let body: Body;
  try {
    body = await readBody(request);
  } catch {
    return { refused: true, ar, csrfToken: csrf.token, setCookies };
  }
  return { ar, body, json: wantsJsonRedirect(request, body), csrfToken: csrf.token, setCookies, csrfOk: verifyCsrf(ar, body.csrfToken) };
}

/** The page's form again, with `read`'s CSRF token and cookies: what every refusal of these pages answers. */
export function formAnswerFor<Values>(read: { csrfToken: string; setCookies: string[] }) {
  return (status: number, errors: Pick<FormAnswer<Values>, "formError" | "fieldErrors">, values: Values): FormAnswer<Values> => ({
    kind: "form",
    status,
    csrfToken: read.csrfToken,
    setCookies: read.setCookies,
    values,
    ...errors,
  });
}

/** The refusals every password page shares, written in the request's language when called. */
export const FORM_EXPIRED = () => t("common.formExpired");
export const UNREADABLE = () => t("common.unknownRequest");

/** A typed text field as kept for the re-rendered form (strings only, bounded). */
export function typed(value: unknown, max = 320): string {
  return typeof value === "string" ? value.slice(0, max) : "";
}

/** An optional display name, by the one name rule (core/display-text.ts): none, or refused with the reason. */
export function readName(value: unknown): { ok: true; name: string | null } | { ok: false; message: string } {
  if (value === undefined || value === null || value === "") return { ok: true, name: null };
  if (typeof value !== "string") return { ok: false, message: t("name.notText") };
  const checked = checkName(value);
  if (checked.ok) return { ok: true, name: checked.name };
  if (checked.reason === "empty") return { ok: true, name: null };
  return { ok: false, message: nameRefusalMessage(checked, "account.nameEmpty") };
}

export function relativeCallback(url: string): string {
  return toRelative(url);
}
