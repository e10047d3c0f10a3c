// Shared steps of the e-mail tests: configure the app, ask for a link through the real route
// module, open a link in a given (or fresh) cookie jar, read the session back.
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { resetConfig } from "../../../app/auth/core/config.server.ts";
import { csrfResponse, sessionResponse } from "../../../app/auth/core/endpoints.server.ts";
import * as callbackEmail from "../../../app/routes/auth/callback-email.tsx";
import * as signinProvider from "../../../app/routes/auth/signin-provider.ts";
import { callRoute, CookieJar, get, ORIGIN, post } from "../../support/http.ts";
import { resetDatabase } from "../../support/db.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import { startSmtpSink, type SmtpSink } from "../../support/smtp-sink.ts";

const TOUCHED = new Set<string>();
const ORIGINAL = { ...process.env };

/** Sets (or, with undefined, removes) environment variables and reloads the configuration. */
export function configure(env: Record<string, string | undefined>) {
  for (const [k, v] of Object.entries(env)) {
    TOUCHED.add(k);
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetConfig();
}

afterEach(() => {
  for (const k of TOUCHED) {
    if (ORIGINAL[k] === undefined) delete process.env[k];
    else process.env[k] = ORIGINAL[k];
  }
  TOUCHED.clear();
  resetConfig();
});

export function smtpEnv(url: string, extra: Record<string, string | undefined> = {}) {
  return { AUTH_EMAIL_SERVER: url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>", ...extra };
}

type LinkRequest = { email: unknown; callbackUrl?: string; csrfToken?: string | null; json?: boolean; [k: string]: unknown };

/** POST /auth/signin/email as the sign-in form does (CSRF token from the jar unless given). */
export async function requestLink(
  jar: CookieJar,
  { email, csrfToken, json, ...rest }: LinkRequest,
  options: { headers?: Record<string, string>; bodyJson?: boolean } = {},
): Promise<Response> {
  const token = csrfToken === undefined ? await csrfFor(jar, options.headers) : csrfToken;
  const body: Record<string, unknown> = { ...rest };
  if (token !== null) body.csrfToken = token;
  if (email !== undefined) body.email = email;
  if (json) body.json = "true";
  const res = await callRoute(signinProvider.action, post("/auth/signin/email", body, { jar, headers: options.headers, json: options.bodyJson }), {
    provider: "email",
  });
  jar.apply(res);
  return res;
}

/** GET /auth/csrf with the same headers as the POST to come (forwarded https → __Host- cookie). */
export async function csrfFor(jar: CookieJar, headers?: Record<string, string>): Promise<string> {
  const res = csrfResponse(get("/auth/csrf", { jar, headers }));
  jar.apply(res);
  return ((await res.json()) as { csrfToken: string }).csrfToken;
}

/** GET of an e-mail link, in `jar` (a fresh browser by default). */
export async function openLink(link: URL | string, jar = new CookieJar(), headers?: Record<string, string>): Promise<Response> {
  const url = new URL(link);
  const res = await callRoute(callbackEmail.loader, get(url.pathname + url.search, { jar, headers }));
  jar.apply(res);
  return res;
}

/** POST /auth/callback/email, as the "Sign in as …" button does. */
export async function confirmLink(jar: CookieJar, fields: Record<string, string>): Promise<Response> {
  const res = await callRoute(callbackEmail.action, post("/auth/callback/email", fields, { jar }));
  jar.apply(res);
  return res;
}

export async function sessionOf(jar: CookieJar): Promise<{ user: { email: string | null; name: string | null } } | null> {
  return (await (await sessionResponse(get("/auth/session", { jar }))).json()) as never;
}

export function location(res: Response): URL {
  const value = res.headers.get("Location");
  if (!value) throw new Error(`no Location header (status ${res.status})`);
  return new URL(value, ORIGIN);
}

/** The secret tests/support/setup-env.ts put in place. */
export const TEST_AUTH_SECRET = process.env.AUTH_SECRET!;

export { ORIGIN };

/**
 * One SMTP sink for the test file. Before each test: an empty database, an empty sink, and (unless
 * `env` is null) sign-in links configured to go through the sink with `env` on top.
 */
export function useSmtpSink(env: Record<string, string | undefined> | null = {}): { readonly sink: SmtpSink } {
  const holder = {} as { sink: SmtpSink };
  beforeAll(async () => {
    holder.sink = await startSmtpSink();
  });
  afterAll(() => holder.sink.close());
  beforeEach(async () => {
    // A security e-mail the last test queued is sent (in the background) before the sink is emptied.
    await mailSenderIdle();
    await resetDatabase();
    holder.sink.clear();
    if (env) configure(smtpEnv(holder.sink.url, env));
  });
  return holder;
}
