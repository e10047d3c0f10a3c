// Requests that are valid HTTP but not what a browser sends, over raw sockets against the
// production server: asterisk and absolute-form targets, header blocks over 16 KiB, and methods a
// page does not take. None may answer 500, show a stack trace or React Router's internal text.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/browser";
import { rawRequest, type RawResponse } from "../support/raw-http";

let app: RunningApp;
let port: number;
let host: string;

beforeAll(async () => {
  app = await startApp();
  port = Number(new URL(app.url).port);
  host = new URL(app.url).host;
});
afterAll(() => app?.stop());

const send = (head: string, body = "") => rawRequest(port, `${head}\r\nConnection: close\r\n\r\n${body}`);

const INTERNAL_TEXT = /did not provide an `action`|Invalid request method|no way to handle the request/;
const STACK_TRACE = /\n\s+at .+:\d+:\d+\)?\n/;

function expectNoLeak(res: RawResponse) {
  expect(res.status).toBeLessThan(500);
  expect(res.raw).not.toMatch(INTERNAL_TEXT);
  expect(res.raw).not.toMatch(STACK_TRACE);
}

describe("request targets other than a path", () => {
  it("OPTIONS * answers 204 with the server's methods; any other method with * is 400", async () => {
    const options = await send(`OPTIONS * HTTP/1.1\r\nHost: ${host}`);
    expectNoLeak(options);
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe("GET, HEAD, POST");
    expect(options.body).toBe("");

    const get = await send(`GET * HTTP/1.1\r\nHost: ${host}`);
    expectNoLeak(get);
    expect(get.status).toBe(400);
  });

  it("an absolute-form target naming another host is 400; naming this host, it is served as its path", async () => {
    for (const target of ["http://other.example/", "https://other.example/auth/providers", `ftp://${host}/`, "http://[/", `http://${host}@other.example/`]) {
      const res = await send(`GET ${target} HTTP/1.1\r\nHost: ${host}`);
      expectNoLeak(res);
      expect(res.status, target).toBe(400);
    }
    const own = await send(`GET http://${host.toUpperCase()}/auth/providers?x=1 HTTP/1.1\r\nHost: ${host}`);
    expectNoLeak(own);
    expect(own.status).toBe(200);
    expect(JSON.parse(own.body)).toHaveProperty("credentials");
  });

  it("a path starting with // is a path on this host, never another origin", async () => {
    const res = await send(`GET //other.example/auth/providers HTTP/1.1\r\nHost: ${host}`);
    expectNoLeak(res);
    expect(res.body).not.toContain("other.example/auth");
  });
});

describe("Host headers the URL parser refuses", () => {
  // Each passes a plain "name or [address], optional port" shape but is not a host: a port over
  // 65535, an IPv6 literal with too many colons or two "::", an IPv4 address in brackets, an
  // IPv4-looking name with octets over 255. Building the request URL from them threw: 500.
  it.each(["localhost:99999", "localhost:65536", "[:::]", "[1::2::3]", "[1.2.3.4]", "999.999.999.999", "1.2.3.256:80"])(
    "Host: %s answers 400",
    async (bad) => {
      const res = await send(`GET /auth/session HTTP/1.1\r\nHost: ${bad}`);
      expectNoLeak(res);
      expect(res.status).toBe(400);
      expect(res.body).toBe('"Bad request."');
    },
  );

  it("the highest port, an IPv6 literal and a name still reach the app", async () => {
    for (const good of ["localhost:65535", "[::1]", `[::1]:${port}`, "127.0.0.1", "vestibule.example"]) {
      const res = await send(`GET /auth/providers HTTP/1.1\r\nHost: ${good}`);
      expectNoLeak(res);
      expect(res.status, good).toBe(200);
    }
  });

  it("left no stack trace and no ERR_INVALID_URL in the log", () => {
    expect(app.logs()).not.toMatch(STACK_TRACE);
    expect(app.logs()).not.toMatch(/ERR_INVALID_URL/);
  });
});

describe("header blocks over 16 KiB", () => {
  it("a 15 KiB cookie is served; a 17 KiB cookie, or many headers over 16 KiB, get 431", async () => {
    const fits = await send(`GET /auth/session HTTP/1.1\r\nHost: ${host}\r\nCookie: big=${"x".repeat(15 * 1024)}`);
    expectNoLeak(fits);
    expect(fits.status).toBe(200);

    const cookie = await send(`GET /auth/session HTTP/1.1\r\nHost: ${host}\r\nCookie: big=${"x".repeat(17 * 1024)}`);
    expect(cookie.status).toBe(431);
    expectNoLeak(cookie);

    const many = Array.from({ length: 40 }, (_, i) => `Cookie: c${i}=${"y".repeat(450)}`).join("\r\n");
    const split = await send(`GET / HTTP/1.1\r\nHost: ${host}\r\n${many}`);
    expect(split.status).toBe(431);
    expectNoLeak(split);
  });
});

describe("methods a page does not take", () => {
  it.each([
    ["POST", "/", "GET, HEAD"],
    ["POST", "/welcome", "GET, HEAD"],
    ["PUT", "/", "GET, HEAD"],
    ["OPTIONS", "/account", "GET, HEAD, POST"],
    ["OPTIONS", "/auth/signin", "GET, HEAD, POST"],
  ])("%s %s answers 405 with Allow: %s and a plain page, without React Router's text", async (method, path, allow) => {
    const body = method === "OPTIONS" ? "" : "a=b";
    const res = await send(
      `${method} ${path} HTTP/1.1\r\nHost: ${host}` + (body ? `\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}` : ""),
      body,
    );
    expectNoLeak(res);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.body).toContain("<h1>Method not allowed</h1>");
    expect(res.body).toMatch(/<title>[^<]*Method not allowed/);
    expect(res.body).not.toContain("<script");
  });

  // The Fetch Request that React Router is handed cannot carry TRACE (a forbidden method): its
  // constructor throws, which was a 500 and a stack trace on stderr per request. Other methods
  // Node parses reached resource routes as React Router's 405 "Unexpected Server Error".
  it.each([
    ["TRACE", "/"],
    ["TRACE", "/account"],
    ["TRACE", "/auth/session"],
    ["TRACE", "/auth/callback/credentials"],
    ["PROPFIND", "/auth/session"],
    ["SEARCH", "/auth/csrf"],
    ["PURGE", "/auth/providers"],
    ["PROPFIND", "/"],
  ])("%s %s answers 405 with Allow, before React Router", async (method, path) => {
    const res = await send(`${method} ${path} HTTP/1.1\r\nHost: ${host}`);
    expectNoLeak(res);
    expect(res.raw).not.toContain("Unexpected Server Error");
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("GET, HEAD, POST");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("left nothing internal in the log: no stack trace, no React Router message", () => {
    expect(app.logs()).not.toMatch(STACK_TRACE);
    expect(app.logs()).not.toMatch(INTERNAL_TEXT);
  });
});
