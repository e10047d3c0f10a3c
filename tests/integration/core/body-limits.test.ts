// For request bodies, through the route modules (middleware included, as
// React Router runs them): every POST route reads its body once, through the one limited
// reader; a chunked body is stopped at the limit; other media types get 415; odd JSON never 500s.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_BODY_LIMIT } from "../../../app/auth/core/body.server";
import * as accountRoute from "../../../app/routes/account";
import * as accountEmailRoute from "../../../app/routes/account-email";
import * as callbackEmailRoute from "../../../app/routes/auth/callback-email";
import * as callbackRoute from "../../../app/routes/auth/callback";
import { runWithLocale, t } from "../../../app/i18n/t.server";
import * as logRoute from "../../../app/routes/auth/log";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as signinProviderRoute from "../../../app/routes/auth/signin-provider";
import * as signinRoute from "../../../app/routes/auth/signin";
import * as signoutRoute from "../../../app/routes/auth/signout";
import { createUser, signIn } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { callRoute, CookieJar, ORIGIN } from "../../support/http";

type Handler = (...args: any[]) => unknown;
type RouteModule = { action?: Handler; middleware?: readonly Handler[] };

/** Runs the route's middleware around its action, as React Router does for a POST. */
function runPost(route: RouteModule, request: Request, params: Record<string, string> = {}): Promise<Response> {
  const terminal = () => callRoute(route.action!, request, params);
  return (route.middleware ?? []).reduceRight<() => Promise<Response>>(
    (next, mw) => () => callRoute((args) => mw(args, next), request, params),
    terminal,
  )();
}

/**
 * A POST whose body is made on the fly in 16 KiB chunks (no Content-Length), starting with
 * `prefix`; `pulled()` counts the bytes the app took and `reads()` how many times a reader started.
 */
function chunkedPost(path: string, jar: CookieJar, { total = 1024 ** 3, type = "application/x-www-form-urlencoded", prefix = "" } = {}) {
  const chunk = 16 * 1024;
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        const bytes = new Uint8Array(Math.min(chunk, total - pulled)).fill(0x61);
        if (pulled === 0) bytes.set(new TextEncoder().encode(prefix).subarray(0, bytes.length));
        pulled += bytes.length;
        controller.enqueue(bytes);
      },
    },
    { highWaterMark: 0 },
  );
  const headers = new Headers({ Cookie: jar.header(), Origin: ORIGIN });
  if (type) headers.set("Content-Type", type);
  const request = new Request(new URL(path, ORIGIN), { method: "POST", headers, body, duplex: "half" } as RequestInit);
  return { request, pulled: () => pulled, chunk };
}

function plainPost(path: string, jar: CookieJar, body: string, type?: string) {
  const headers = new Headers({ Cookie: jar.header(), Origin: ORIGIN });
  if (type) headers.set("Content-Type", type);
  return new Request(new URL(path, ORIGIN), { method: "POST", headers, body });
}

const ROUTES: { path: string; route: RouteModule; params?: Record<string, string> }[] = [
  { path: "/auth/signin", route: signinRoute },
  { path: "/auth/signin/credentials", route: signinProviderRoute, params: { provider: "credentials" } },
  { path: "/auth/signin/email", route: signinProviderRoute, params: { provider: "email" } },
  { path: "/auth/callback/credentials", route: callbackRoute, params: { provider: "credentials" } },
  { path: "/auth/callback/email", route: callbackEmailRoute },
  { path: "/auth/signout", route: signoutRoute },
  { path: "/auth/session", route: sessionRoute },
  { path: "/auth/_log", route: logRoute },
  { path: "/account", route: accountRoute },
  { path: "/account/email", route: accountEmailRoute },
];

let jar: CookieJar;
let csrfToken: string;
let userId: string;

beforeEach(async () => {
  await resetDatabase();
  userId = (await createUser()).id;
  ({ jar, csrfToken } = await signIn());
});
afterEach(async () => {
  // Nothing a refused request sent was written.
  expect((await testDb().user.findUnique({ where: { id: userId } }))?.name).toBe("Ada");
});

describe(`request bodies (${dbLabel})`, () => {
  it.each(ROUTES)("$path: a 1 GiB chunked body is refused with 413 after the first 64 KiB", async ({ path, route, params }) => {
    const limit = path === "/auth/_log" ? 4 * 1024 : DEFAULT_BODY_LIMIT;
    const form = chunkedPost(path, jar, { prefix: `csrfToken=${csrfToken}&json=true&name=` });
    expect((await runPost(route, form.request, params)).status).toBe(413);
    expect(form.pulled()).toBeLessThanOrEqual(limit + form.chunk);
    const json = chunkedPost(path, jar, { type: "application/json", prefix: `{"csrfToken":"${csrfToken}","json":"true","name":"` });
    expect((await runPost(route, json.request, params)).status).toBe(413);
    expect(json.pulled()).toBeLessThanOrEqual(limit + json.chunk);
  });

  it.each(ROUTES)("$path: multipart, text/plain and a body with no type get 415 without a byte read", async ({ path, route, params }) => {
    for (const type of ["multipart/form-data; boundary=----x", "text/plain", ""]) {
      const body = chunkedPost(path, jar, { type, total: 1024 });
      expect((await runPost(route, body.request, params)).status, type).toBe(415);
      expect(body.pulled(), type).toBe(0);
    }
  });

  it("JSON-redirect mode on /auth/signin and /auth/signout: the middleware and the action share one read", async () => {
    for (const route of [signinRoute, signoutRoute]) {
      const path = route === signinRoute ? "/auth/signin" : "/auth/signout";
      // json=true in the body: the middleware answers {url}.
      const json = chunkedPost(path, jar, { total: 200, prefix: `csrfToken=${csrfToken}&json=true&callbackUrl=%2F&x=` });
      const answered = await runPost(route, json.request);
      expect(answered.status, path).toBe(200);
      expect(await answered.json()).toHaveProperty("url");
      // No json=true: the middleware passes on, and the action gets the body the middleware read.
      const plain = chunkedPost(path, jar, { total: 200, prefix: `csrfToken=${csrfToken}&callbackUrl=%2F&x=` });
      const redirected = await runPost(route, plain.request);
      expect(redirected.status, path).toBe(302);
      expect(plain.pulled()).toBe(200);
      ({ jar, csrfToken } = await signIn());
    }
  });

  it.each([
    ["null", "application/json", 400],
    ["[]", "application/json", 400],
    ["42", "application/json", 400],
    ['"intent"', "application/json", 400],
    ["{broken", "application/json", 400],
    ["", "application/json", 400],
    ["intent=update-profile&name=Eve", undefined, 415],
    ["intent=update-profile&name=Eve", "text/plain", 415],
    ["--x\r\nContent-Disposition: form-data; name=\"intent\"\r\n\r\nupdate-profile\r\n--x--\r\n", "multipart/form-data; boundary=x", 415],
  ] as const)("POST /account with %j as %s → %i, the page's own refusal", async (body, type, status) => {
    const res = await callRoute(accountRoute.action, plainPost("/account", jar, body, type));
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ formError: expect.any(String), fieldErrors: {} });
  });

  it("POST /account with a 70 KiB form or JSON body → 413, saying in the visitor's language what happened and what to do", async () => {
    const name = "x".repeat(70 * 1024);
    for (const [body, type] of [
      [new URLSearchParams({ csrfToken, intent: "update-profile", name }).toString(), "application/x-www-form-urlencoded"],
      [JSON.stringify({ csrfToken, intent: "update-profile", name }), "application/json"],
    ]) {
      const res = await runWithLocale("fr", () => callRoute(accountRoute.action, plainPost("/account", jar, body!, type)));
      expect(res.status, type).toBe(413);
      expect(((await res.json()) as { formError: string }).formError).toBe(runWithLocale("fr", () => t("boundary.tooLarge.message")));
    }
  });

  it("POST /account with a JSON object body works like the form", async () => {
    const res = await callRoute(accountRoute.action, plainPost("/account", jar, JSON.stringify({ csrfToken, intent: "update-profile", name: "Ada" }), "application/json"));
    expect(res.status).toBe(302);
  });
});
