// The curl sign-in recipe of docs/features/signing-in.md ("Signing in from a script"), request for
// request as curl sends it: no Origin, no Sec-Fetch-Site, the cookies of a cookie jar, a
// URL-encoded body. GET /auth/csrf, POST /auth/callback/credentials, then GET /auth/session.
import { beforeAll, beforeEach, expect, it } from "vitest";
import { appHandler } from "../../support/app-handler.ts";
import { createUser, PASSWORD } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";

let handle: (request: Request) => Promise<Response>;
beforeAll(async () => {
  handle = await appHandler();
});
beforeEach(() => resetDatabase());

/** One curl call with `-c jar -b jar` (and `-d` fields when given). */
async function curl(jar: CookieJar, path: string, fields?: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  const init: RequestInit = { headers: { "user-agent": "curl/8.5.0", accept: "*/*", cookie: jar.header(), ...headers }, redirect: "manual" };
  if (fields) {
    init.method = "POST";
    init.body = new URLSearchParams(fields).toString();
    (init.headers as Record<string, string>)["content-type"] = "application/x-www-form-urlencoded";
  }
  const res = await handle(new Request(`${ORIGIN}${path}`, init));
  jar.apply(res);
  return res;
}

it(`signs in with the CSRF token and its cookie, then reads the session (${dbLabel})`, async () => {
  await createUser("ada@example.com", "Ada");
  const jar = new CookieJar();
  const { csrfToken } = (await (await curl(jar, "/auth/csrf")).json()) as { csrfToken: string };
  const signedIn = await curl(jar, "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: PASSWORD });
  expect(signedIn.status).toBe(302);
  expect(signedIn.headers.get("location")).toBe(`${ORIGIN}/`);
  const session = (await (await curl(jar, "/auth/session")).json()) as { user: { email: string; name: string } };
  expect(session.user).toMatchObject({ email: "ada@example.com", name: "Ada" });
});

it(`answers a JSON client with the address to go to (${dbLabel})`, async () => {
  await createUser("ada@example.com", "Ada");
  const jar = new CookieJar();
  const { csrfToken } = (await (await curl(jar, "/auth/csrf")).json()) as { csrfToken: string };
  const signedIn = await curl(jar, "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: PASSWORD, json: "true" }, { accept: "application/json" });
  expect(signedIn.status).toBe(200);
  expect(await signedIn.json()).toEqual({ url: `${ORIGIN}/` });
  expect(((await (await curl(jar, "/auth/session")).json()) as { user: { email: string } }).user.email).toBe("ada@example.com");
});

it(`refuses the POST without the jar's CSRF cookie, and a wrong password, leaving no session (${dbLabel})`, async () => {
  await createUser("ada@example.com", "Ada");
  const jar = new CookieJar();
  const { csrfToken } = (await (await curl(jar, "/auth/csrf")).json()) as { csrfToken: string };
  const noCookie = await curl(new CookieJar(), "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: PASSWORD });
  expect(noCookie.headers.get("location") ?? "").toContain("error=");
  const wrong = await curl(jar, "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: "not it" });
  expect(wrong.headers.get("location") ?? "").toContain("error=CredentialsSignin");
  expect(await (await curl(jar, "/auth/session")).json()).toBeNull();
});
