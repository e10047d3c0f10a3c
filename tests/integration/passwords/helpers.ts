// Steps of the sign-up and forgotten-password tests: the real route modules with real cookies.
import { expect } from "vitest";
import * as callbackEmail from "../../../app/routes/auth/callback-email.tsx";
import * as forgotPassword from "../../../app/routes/auth/forgot-password.tsx";
import * as resetPassword from "../../../app/routes/auth/reset-password.tsx";
import * as signup from "../../../app/routes/auth/signup.tsx";
import * as verifyRequest from "../../../app/routes/auth/verify-request.tsx";
import { callRoute, CookieJar, get, post } from "../../support/http.ts";
import type { ReceivedMessage } from "../../support/smtp-sink.ts";
import { csrfFor } from "../email/helpers.ts";

export function codeIn(message: ReceivedMessage): string {
  const m = /code in the browser where you asked: (\d{6})/.exec(message.text ?? "");
  if (!m) throw new Error(`no code in the message:\n${message.text}`);
  return m[1]!;
}

/** Every link of a message's text part, in order. */
export function linksIn(message: ReceivedMessage): URL[] {
  return [...(message.text ?? "").matchAll(/https?:\/\/\S+/g)].map((m) => new URL(m[0]));
}

type PostOptions = { csrf?: string | null; headers?: Record<string, string> };

async function postForm(fn: (args: never) => unknown, path: string, jar: CookieJar, fields: Record<string, string>, options: PostOptions = {}) {
  const csrfToken = options.csrf === undefined ? await csrfFor(jar) : options.csrf;
  const body: Record<string, string> = { ...fields };
  if (csrfToken !== null) body.csrfToken = csrfToken;
  const res = await callRoute(fn as never, post(path, body, { jar, headers: options.headers }));
  jar.apply(res);
  return res;
}

export const signUp = (jar: CookieJar, fields: Record<string, string>, options?: PostOptions) => postForm(signup.action, "/auth/signup", jar, fields, options);
export const askReset = (jar: CookieJar, email: string, options?: PostOptions) => postForm(forgotPassword.action, "/auth/forgot-password", jar, { email }, options);
export const postReset = (jar: CookieJar, fields: Record<string, string>, options?: PostOptions) => postForm(resetPassword.action, "/auth/reset-password", jar, fields, options);
export const typeCode = (jar: CookieJar, code: string, options?: PostOptions) => postForm(callbackEmail.action, "/auth/callback/email", jar, { code }, options);

/**
 * A refused reset's answer to a browser (Post/Redirect/Get): a redirect back to the form's page —
 * the code form (/auth/verify-request?type=reset) or the link's (/auth/reset-password?token=…) —
 * with the refusal named in the query.
 */
export function isResetRefusal(res: Response): boolean {
  const location = res.headers.get("Location");
  if (res.status !== 302 || location === null) return false;
  const url = new URL(location, "http://localhost");
  return ["/auth/verify-request", "/auth/reset-password"].includes(url.pathname) && url.searchParams.has("refused");
}

/** What the page a refused reset's redirect leads to says, beside each field, in this browser. */
export async function resetRefusalOf(jar: CookieJar, res: Response): Promise<{ code: string | null; password: string | null; minLength: number }> {
  if (!isResetRefusal(res)) throw new Error(`not a refusal: ${res.status} ${res.headers.get("Location")}`);
  const location = new URL(res.headers.get("Location")!, "http://localhost");
  const byCode = location.pathname === "/auth/verify-request";
  const page = await callRoute((byCode ? verifyRequest.loader : resetPassword.loader) as never, get(location.pathname + location.search, { jar }));
  jar.apply(page);
  expect(page.status).toBe(200);
  if (byCode) {
    const data = (await page.json()) as { codeError: string | null; passwordError: string | null; codeForm: { minLength: number } };
    return { code: data.codeError, password: data.passwordError, minLength: data.codeForm.minLength };
  }
  const data = (await page.json()) as { fieldErrors: Record<string, string>; values: { minLength: number } };
  return { code: data.fieldErrors.code ?? null, password: data.fieldErrors.password ?? null, minLength: data.values.minLength };
}

export async function openResetPage(link: URL, jar = new CookieJar()) {
  const res = await callRoute(resetPassword.loader, get(link.pathname + link.search, { jar }));
  jar.apply(res);
  return res;
}

export async function pageOf(loader: (args: never) => unknown, path: string, jar = new CookieJar()) {
  const res = await callRoute(loader as never, get(path, { jar }));
  jar.apply(res);
  return res;
}

export const setCookieNames = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.slice(0, c.indexOf("=")))
    .sort();

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export { signup, forgotPassword, resetPassword };
