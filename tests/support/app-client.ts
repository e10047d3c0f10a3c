// Plain-HTTP visits to a running production server (startApp): a cookie jar, redirects not
// followed, and the three ways to sign in walked the way a browser without JavaScript walks them.
import type { RunningApp } from "./browser";
import { CookieJar } from "./http";
import { visitIdp } from "./idp";
import { isSecurityNotice, linkIn, type SmtpSink } from "./smtp-sink";

export type CallInit = { method?: string; body?: Record<string, string>; headers?: Record<string, string> };

/** One request to `base` (an app's URL) with the jar's cookies; the answer's cookies go into the jar. */
export async function call(base: RunningApp | string, jar: CookieJar, path: string, init: CallInit = {}) {
  const origin = typeof base === "string" ? base : base.url;
  const res = await fetch(new URL(path, origin), {
    method: init.method ?? (init.body ? "POST" : "GET"),
    redirect: "manual",
    headers: {
      Cookie: jar.header(),
      ...(init.body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
      ...init.headers,
    },
    body: init.body ? new URLSearchParams(init.body) : undefined,
    // No answer in 30 s is a hang: fail the test rather than wait for its timeout.
    signal: AbortSignal.timeout(30_000),
  });
  jar.apply(res);
  return res;
}

export async function csrfToken(app: RunningApp, jar: CookieJar): Promise<string> {
  return ((await (await call(app, jar, "/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
}

/** GET /auth/session: the signed-in user's e-mail address, or null. */
export async function sessionEmail(app: RunningApp, jar: CookieJar): Promise<string | null> {
  const res = await call(app, jar, "/auth/session");
  if (res.status !== 200) throw new Error(`GET /auth/session answered ${res.status}`);
  const body = (await res.json()) as { user?: { email?: string } } | null;
  return body?.user?.email ?? null;
}

/** A credentials sign-in; the answer is the redirect. */
export async function credentialsSignIn(app: RunningApp, email: string, password: string, jar = new CookieJar()) {
  const token = await csrfToken(app, jar);
  const res = await call(app, jar, "/auth/callback/credentials", {
    body: { csrfToken: token, email, password, callbackUrl: `${app.url}/account` },
  });
  await res.body?.cancel();
  return { res, jar, csrfToken: token };
}

/** Asks `app` for a sign-in link and returns it as delivered to `sink` (the `nth` message, from 1). */
export async function requestEmailLink(app: RunningApp, sink: SmtpSink, email: string, nth: number, jar = new CookieJar()) {
  const before = sink.messages.length;
  const token = await csrfToken(app, jar);
  const res = await call(app, jar, "/auth/signin/email", { body: { csrfToken: token, email, callbackUrl: `${app.url}/account` } });
  await res.body?.cancel();
  if (res.status !== 302) throw new Error(`e-mail sign-in request answered ${res.status}`);
  // The nth message, or the first after it that is not a security e-mail (a sign-in from a new
  // browser sends one, at the mail queue's pace: ADR 081); never one that was there before asking.
  for (let count = Math.max(nth, before + 1); ; count++) {
    const message = (await sink.waitFor(count, 10_000))[count - 1]!;
    if (!isSecurityNotice(message)) return { link: linkIn(message), jar, csrfToken: token, res };
  }
}

/**
 * An OAuth sign-in with provider `oidc`: started on `start`, the IdP visited as `user`, and the
 * IdP's answer delivered to `finish` (by default the same server). Returns the jar and the answers.
 */
export async function oauthSignIn(start: RunningApp, user: { email: string; password: string }, finish: RunningApp = start, jar = new CookieJar()) {
  const token = await csrfToken(start, jar);
  const begun = await call(start, jar, "/auth/signin/oidc", { body: { csrfToken: token, callbackUrl: `${start.url}/account` } });
  await begun.body?.cancel();
  const authorizationUrl = begun.headers.get("Location");
  if (begun.status !== 302 || !authorizationUrl) throw new Error(`OAuth start answered ${begun.status}`);
  const answer = await visitIdp(authorizationUrl, user);
  if (answer.kind !== "redirect") throw new Error("expected a redirect from the IdP");
  const callback = new URL(answer.url);
  const back = await call(finish, jar, callback.pathname + callback.search);
  await back.body?.cancel();
  return { jar, res: back, authorizationUrl, callbackUrl: answer.url };
}
