// The Auth.js wire protocol against the real production server (node:http + the build), the way
// next-auth/react clients speak it: no browser, plain HTTP with a cookie jar.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { CookieJar } from "../support/http";
import { sessionUserLike } from "../support/session-user";

let app: RunningApp;

beforeAll(async () => {
  app = await startApp();
  await seedUser(app, { email: "client@example.com", password: "client-password-1", name: "Client" });
});
afterAll(() => app?.stop());

async function call(jar: CookieJar, path: string, init: { method?: string; body?: Record<string, string>; headers?: Record<string, string> } = {}) {
  const res = await fetch(app.url + path, {
    method: init.method ?? "GET",
    redirect: "manual",
    headers: {
      Cookie: jar.header(),
      ...(init.body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
      ...init.headers,
    },
    body: init.body ? new URLSearchParams(init.body) : undefined,
  });
  jar.apply(res);
  return res;
}

describe.each([
  ["v5 (X-Auth-Return-Redirect: 1)", { headers: { "X-Auth-Return-Redirect": "1" }, extra: {} }],
  ["v4 (json=true)", { headers: {}, extra: { json: "true" } }],
])("a next-auth/react %s client", (_label, mode) => {
  it("gets a token, signs in, reads and updates the session, and signs out — all as {url} JSON", async () => {
    const jar = new CookieJar();
    const { csrfToken } = await (await call(jar, "/auth/csrf")).json();
    expect(csrfToken).toMatch(/^[0-9a-f]{64}$/);

    const signin = await call(jar, "/auth/callback/credentials", {
      method: "POST",
      headers: mode.headers,
      body: { csrfToken, email: "client@example.com", password: "client-password-1", callbackUrl: `${app.url}/account`, ...mode.extra },
    });
    expect(signin.status).toBe(200);
    expect(await signin.json()).toEqual({ url: `${app.url}/account` });
    expect(jar.get("authjs.session-token")).toBeTruthy();

    const session = await (await call(jar, "/auth/session")).json();
    expect(session.user).toEqual(sessionUserLike({ name: "Client", email: "client@example.com", image: null }));

    const updated = await fetch(`${app.url}/auth/session`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Cookie: jar.header() },
      body: JSON.stringify({ csrfToken, data: { name: "Client Renamed" } }),
    });
    jar.apply(updated);
    expect((await updated.json()).user.name).toBe("Client Renamed");

    const signout = await call(jar, "/auth/signout", { method: "POST", headers: mode.headers, body: { csrfToken, callbackUrl: "/", ...mode.extra } });
    expect(signout.status).toBe(200);
    expect(signout.headers.get("Content-Type")).toBe("application/json");
    expect(await signout.json()).toEqual({ url: `${app.url}/` });
    expect(jar.get("authjs.session-token")).toBeUndefined();
    expect(await (await call(jar, "/auth/session")).json()).toBeNull();

    const badCsrf = await call(jar, "/auth/signout", { method: "POST", headers: mode.headers, body: { csrfToken: "nope", ...mode.extra } });
    expect(await badCsrf.json()).toEqual({ url: `${app.url}/auth/signin?error=MissingCSRF` });

    // Put the name back for the other client generation.
    const again = await call(jar, "/auth/callback/credentials", { method: "POST", body: { csrfToken, email: "client@example.com", password: "client-password-1" } });
    expect(again.status).toBe(302);
    await fetch(`${app.url}/auth/session`, { method: "POST", headers: { "Content-Type": "application/json", Cookie: jar.header() }, body: JSON.stringify({ csrfToken, data: { name: "Client" } }) });
  });
});

describe("the server itself", () => {
  it("still answers a plain form POST to /auth/signout with a redirect", async () => {
    const jar = new CookieJar();
    const { csrfToken } = await (await call(jar, "/auth/csrf")).json();
    const res = await call(jar, "/auth/signout", { method: "POST", body: { csrfToken } });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe(`${app.url}/`);
  });

  it("refuses a malformed Host header with 400 instead of a 500 and a stack trace", async () => {
    const port = new URL(app.url).port;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, path: "/auth/session", headers: { Host: "[" } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(answer).toEqual({ status: 400, body: '"Bad request."' });
    expect(app.logs()).not.toMatch(/ERR_INVALID_URL|at .*\.js:\d+/);
  });

  it("answers unmatched URLs with 404 and no logged error", async () => {
    const res = await fetch(`${app.url}/no-such-file.ico`);
    expect(res.status).toBe(404);
    // A stack frame ("at fn (file:line:col)"), not any "at … (" in the page's own texts.
    expect(await res.text()).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
    expect(app.logs()).not.toMatch(/No route matches/);
  });
});
