// Shared steps of the organization tests: the whole app in process (React Router's pipeline, its
// middleware and pages), verified users signed in with real cookies, and JSON and form posts to
// the /orgs pages as a JSON client and a browser without JavaScript send them.
import { beforeAll } from "vitest";
import { appHandler } from "../../support/app-handler.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { testDb } from "../../support/db.ts";
import { CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http.ts";

let handle: (request: Request) => Promise<Response>;
export function useApp() {
  beforeAll(async () => {
    handle = await appHandler();
  });
}

export async function send(request: Request, jar?: CookieJar): Promise<Response> {
  const res = await handle(request);
  jar?.apply(res);
  return res;
}

/** A user whose address is verified (what creating an organization and taking an invitation need). */
export async function verifiedUser(email: string, name = email.split("@")[0]!) {
  const user = await createUser(email, name);
  await testDb().user.update({ where: { id: user.id }, data: { emailVerified: new Date() } });
  return user;
}

/** A verified user, signed in: their jar and id. */
export async function member(email: string, name?: string) {
  const user = await verifiedUser(email, name);
  const { jar } = await signIn(new CookieJar(), email);
  return { jar, id: user.id };
}

/** A JSON client's POST (X-Auth-Return-Redirect: 1) with the jar's CSRF token. */
export async function jsonPost(jar: CookieJar, path: string, fields: Record<string, string>) {
  const csrfToken = await fetchCsrf(jar);
  return send(post(path, { csrfToken, ...fields }, { jar, headers: { "X-Auth-Return-Redirect": "1", Origin: ORIGIN } }), jar);
}

/** A browser's form POST (no JavaScript): the answer is a redirect or the page with the refusal. */
export async function formPost(jar: CookieJar, path: string, fields: Record<string, string>) {
  const csrfToken = await fetchCsrf(jar);
  return send(post(path, { csrfToken, ...fields }, { jar, headers: { Origin: ORIGIN, Accept: "text/html" } }), jar);
}

/** A JSON client's GET of a page: its data. */
export async function jsonGet(jar: CookieJar | undefined, path: string) {
  return send(get(path, { jar, headers: { Accept: "application/json" } }), jar);
}

/** A browser's GET of a page: its HTML. */
export async function pageGet(jar: CookieJar | undefined, path: string, headers: Record<string, string> = {}) {
  return send(get(path, { jar, headers: { Accept: "text/html", ...headers } }), jar);
}

/** Creates an organization as the jar's user (JSON client); returns its id and slug. */
export async function createOrg(jar: CookieJar, slug: string, name = slug.toUpperCase()) {
  const res = await jsonPost(jar, "/orgs/new", { name, slug });
  if (res.status !== 200) throw new Error(`creating ${slug}: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { organization: { id: string; slug: string } };
  return body.organization;
}

/** Adds a user to an organization directly (the invitation path has its own tests). */
export async function addMember(organizationId: string, userId: string, role: "owner" | "admin" | "member" = "member") {
  return testDb().membership.create({ data: { organizationId, userId, role } });
}

/** The session as GET /auth/session answers it to the jar. */
export async function sessionJson(jar: CookieJar) {
  const res = await send(get("/auth/session", { jar }), jar);
  return (await res.json()) as { user: { email: string }; expires: string; organization?: { id: string; slug: string; role: string } } | null;
}

export { ORIGIN };
