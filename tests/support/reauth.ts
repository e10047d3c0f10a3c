// Test kit for the recent sign-in rule (ADR 058, ADR 080): age a signed-in
// test session past AUTH_REAUTH_MAX_AGE (or make it recent again) without sleeping, and walk the
// re-authentication page /auth/reauth as a browser does. For app routes guarded by
// requireRecentAuth(request, { maxAge }):
//
//   await createUser();                              // signIn needs the user to exist
//   const { jar } = await signIn();
//   await ageSession(jar, 11);                       // the route now answers 403 ReauthRequired
//   await reauthenticate(jar, { password: PASSWORD }); // recent again, under a new session id
import { authRequest } from "../../app/auth/core/request.server.ts";
import { getSession } from "../../app/auth/core/session.server.ts";
import * as reauthRoute from "../../app/routes/auth/reauth.tsx";
import { testDb } from "./db.ts";
import { callRoute, CookieJar, get, post } from "./http.ts";

export type ReauthPageData = {
  csrfToken: string;
  callbackUrl: string;
  action: string;
  email: string | null;
  methods: { password: string | null; passkey: string | null; email: string | null; providers: { id: string; name: string }[] };
  step: "choose" | "code";
  error: string | null;
};

/** The id of the session the jar carries (null when signed out). */
export async function sessionIdOf(jar: CookieJar): Promise<string | null> {
  const { session } = await getSession(authRequest(get("/", { jar })), { roll: false });
  return session?.sessionId ?? null;
}

/**
 * Moves the sign-in (authenticatedAt) of the jar's session `minutes` into the past: 11 puts it past
 * the default 10-minute window, 0 makes it recent. Returns the session id.
 */
export async function ageSession(jar: CookieJar, minutes: number): Promise<string> {
  const id = await sessionIdOf(jar);
  if (!id) throw new Error("the jar carries no session with a row");
  await testDb().session.update({ where: { id }, data: { authenticatedAt: new Date(Date.now() - minutes * 60_000) } });
  return id;
}

/** GET /auth/reauth?callbackUrl= with the jar: the page's data, or the redirect a signed-out browser gets. */
export async function reauthPage(jar: CookieJar, callbackUrl = "/account", extra = ""): Promise<Response> {
  const res = await callRoute(reauthRoute.loader, get(`/auth/reauth?${new URLSearchParams({ callbackUrl })}${extra}`, { jar }));
  jar.apply(res);
  return res;
}

/**
 * POSTs one factor to /auth/reauth as the page's form does (`provider` defaults to the password's
 * provider, `credentials`), with the CSRF token of the page; `json` answers as a JSON client.
 */
export async function reauthenticate(
  jar: CookieJar,
  fields: Record<string, string>,
  { callbackUrl = "/account", json = false, headers = {} as Record<string, string>, csrfToken = undefined as string | null | undefined } = {},
): Promise<Response> {
  let token = csrfToken;
  if (token === undefined) {
    const page = await reauthPage(jar, callbackUrl);
    token = page.status === 200 ? ((await page.json()) as ReauthPageData).csrfToken : null;
  }
  const body: Record<string, string> = { provider: "credentials", callbackUrl, ...fields };
  if (token) body.csrfToken = token;
  if (json) body.json = "true";
  const request = post(`/auth/reauth?${new URLSearchParams({ callbackUrl })}`, body, { jar, headers });
  // JSON clients are answered by the route's middleware, as on the server.
  const res = json
    ? ((await reauthRoute.middleware[0]!({ request } as never, () => callRoute(reauthRoute.action, request))) as Response)
    : await callRoute(reauthRoute.action, request);
  jar.apply(res);
  return res;
}

/** A refused factor's answer to a browser (Post/Redirect/Get): a redirect back to /auth/reauth, naming the refusal. */
export function isReauthRefusal(res: Response): boolean {
  const location = res.headers.get("Location");
  if (res.status !== 302 || location === null) return false;
  const url = new URL(location, "http://localhost");
  return url.pathname === "/auth/reauth" && (url.searchParams.has("refused") || url.searchParams.has("error"));
}

/** The page a refused factor's redirect leads to, as its loader answers in this browser. */
export async function reauthRefusalPage(jar: CookieJar, res: Response): Promise<ReauthPageData> {
  if (!isReauthRefusal(res)) throw new Error(`not a refusal: ${res.status} ${res.headers.get("Location")}`);
  const location = new URL(res.headers.get("Location")!, "http://localhost");
  const page = await callRoute(reauthRoute.loader, get(location.pathname + location.search, { jar }));
  jar.apply(page);
  return (await page.json()) as ReauthPageData;
}
