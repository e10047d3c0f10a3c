// The production server's fast path for the auth JSON endpoints (server/fast-path.ts, ADR 055)
// must answer exactly as React Router's full pipeline does. Two production servers share one
// database, secret and AUTH_URL — one with the fast path, one with VESTIBULE_FAST_PATH=off — and
// every request of one corpus (signed in and out, both strategies, rolling, chunked and
// duplicated cookies, bad input, HEAD, wrong methods, odd queries and path spellings) goes to
// both over a raw socket. The answers must be the same bytes: status line, every header in
// order, framing and body. Only the Date header, freshly random values (a minted CSRF token, a
// re-issued session JWE) and times that may fall on either side of a second are normalised, the
// times checked to agree within 2 s.
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeJwt } from "~/auth/core/jwt.server";
import { CHUNK_SIZE } from "~/auth/core/cookies.server";
import { SQLITE_FILE_NAME } from "~/db/location.server";
import { grantAccess, mintAccessToken } from "../support/access-token";
import { withEnv } from "../support/auth";
import { startApp, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { openSocket, readAll } from "../support/raw-http";

const EMAIL = "fast@example.com";
const PASSWORD = "fast-path-password-1";
const COOKIE = "authjs.session-token";

type Pair = { fast: RunningApp; full: RunningApp; host: string };

async function startPair(strategy: "jwt" | "database"): Promise<Pair> {
  // The provider on, for GET /api/me (a bearer-token resource, also on the fast path).
  const fast = await startApp({ AUTH_SESSION_STRATEGY: strategy, AUTH_PROVIDER: "true" });
  const full = await startApp({
    AUTH_SESSION_STRATEGY: strategy,
    AUTH_PROVIDER: "true",
    VESTIBULE_FAST_PATH: "off",
    AUTH_URL: fast.env.AUTH_URL!,
    VESTIBULE_DATA_DIR: fast.dataDir,
  });
  return { fast, full, host: new URL(fast.url).host };
}

async function raw(app: RunningApp, request: string | Buffer): Promise<string> {
  const socket = await openSocket(Number(new URL(app.url).port));
  socket.write(request);
  return readAll(socket);
}

const HTTP_DATE = /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\b/g;
const ISO_DATE = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\b/g;

/** The answer without its Date header, random values and times replaced; the times returned apart. */
function normalise(answer: string): { text: string; times: number[] } {
  const times: number[] = [];
  const text = answer
    .replace(/\r\nDate: [^\r]*/, "")
    // A request that brings no X-Request-Id gets a fresh one on either path (ADR 050).
    .replace(/(\r\nX-Request-Id: )[0-9a-f-]{36}(?=\r\n)/i, "$1<request-id>")
    // Each server names its own process in its probes' answers (ADR 106).
    .replace(/(\r\nX-Instance-Pid: )\d+(?=\r\n)/i, "$1<pid>")
    .replace(HTTP_DATE, (d) => (times.push(Date.parse(d)), "<http-date>"))
    .replace(ISO_DATE, (d) => (times.push(Date.parse(d)), "<iso-date>"))
    .replace(/[0-9a-f]{64}/g, "<hex64>")
        // A JWE (or a chunk of one) is freshly random; a database token (43 characters) is re-sent as is.
    .replace(/(authjs\.session-token(?:\.\d+)?=)[A-Za-z0-9_.-]{100,}/g, "$1<jwe>");
  return { text, times };
}

async function expectSameAnswer(pair: Pair, name: string, request: string | Buffer, before?: () => void) {
  before?.();
  const fromFast = normalise(await raw(pair.fast, request));
  before?.();
  const fromFull = normalise(await raw(pair.full, request));
  expect(fromFast.text, name).toBe(fromFull.text);
  expect(fromFast.times.length, name).toBe(fromFull.times.length);
  fromFast.times.forEach((t, i) => expect(Math.abs(t - fromFull.times[i]!), `${name}: time ${i}`).toBeLessThanOrEqual(2000));
  return fromFast.text;
}

function get(pair: Pair, target: string, headers: Record<string, string> = {}, method = "GET") {
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${pair.host}`, "Connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join("\r\n")}\r\n\r\n`;
}

function post(pair: Pair, target: string, body: string, headers: Record<string, string> = {}) {
  return get(pair, target, { "Content-Length": String(Buffer.byteLength(body)), ...headers }, "POST") + body;
}

function chunkedPost(pair: Pair, target: string, body: string, headers: Record<string, string> = {}) {
  const pieces = [body.slice(0, 10), body.slice(10)].filter(Boolean);
  const framed = pieces.map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join("") + "0\r\n\r\n";
  return get(pair, target, { "Transfer-Encoding": "chunked", ...headers }, "POST") + framed;
}

/** Signs in through the fast server over HTTP; returns the session and CSRF cookie pairs and the token. */
async function signIn(pair: Pair) {
  const csrfAnswer = await raw(pair.fast, get(pair, "/auth/csrf"));
  const csrfToken = /"csrfToken":"([0-9a-f]{64})"/.exec(csrfAnswer)![1]!;
  const csrfCookie = /Set-Cookie: (authjs\.csrf-token=[^;]+)/i.exec(csrfAnswer)![1]!;
  const form = new URLSearchParams({ csrfToken, email: EMAIL, password: PASSWORD }).toString();
  const answer = await raw(pair.fast, post(pair, "/auth/callback/credentials", form, { "Content-Type": "application/x-www-form-urlencoded", Cookie: csrfCookie }));
  const session = new RegExp(`Set-Cookie: (${COOKIE.replace(".", "\\.")}=[^;]+)`, "i").exec(answer)?.[1];
  if (!session) throw new Error(`sign-in failed:\n${answer}`);
  return { session, csrfCookie, csrfToken };
}

/** The requests both strategies share: every fast-path route, and what must fall through to React Router. */
async function commonCorpus(pair: Pair, s: { session: string; csrfCookie: string; csrfToken: string }) {
  const both = `${s.session}; ${s.csrfCookie}`;
  const json = { "Content-Type": "application/json" };
  const form = { "Content-Type": "application/x-www-form-urlencoded" };
  const cases: [string, string | Buffer][] = [
    ["session, signed out", get(pair, "/auth/session")],
    ["session, signed in", get(pair, "/auth/session", { Cookie: s.session })],
    ["session, signed in, other headers", get(pair, "/auth/session", { Cookie: both, "User-Agent": "Mozilla/5.0 test", Accept: "application/json", "X-Auth-Return-Redirect": "1" })],
    ["session, HEAD", get(pair, "/auth/session", { Cookie: s.session }, "HEAD")],
    ["session, odd query", get(pair, "/auth/session?_routes=root&index&x=%zz&&=", { Cookie: s.session })],
    ["session, empty query", get(pair, "/auth/session?", { Cookie: s.session })],
    ["session, garbage cookie", get(pair, "/auth/session", { Cookie: `${COOKIE}=not-a-session` })],
    ["session, duplicated cookie", get(pair, "/auth/session", { Cookie: `${s.session}; ${s.session}` })],
    ["session, orphan chunk", get(pair, "/auth/session", { Cookie: `${COOKIE}.1=abc` })],
    ["session, trailing slash (full pipeline)", get(pair, "/auth/session/", { Cookie: s.session })],
    ["session, upper case (full pipeline)", get(pair, "/AUTH/SESSION", { Cookie: s.session })],
    ["session, .data (full pipeline)", get(pair, "/auth/session.data", { Cookie: s.session })],
    ["session, PUT", get(pair, "/auth/session", { Cookie: s.session, "Content-Length": "0" }, "PUT")],
    ["session, DELETE", get(pair, "/auth/session", { Cookie: s.session }, "DELETE")],
    ["session, OPTIONS", get(pair, "/auth/session", {}, "OPTIONS")],
    ["session, PATCH", get(pair, "/auth/session", { "Content-Length": "0" }, "PATCH")],
    ["session update, no CSRF", post(pair, "/auth/session", JSON.stringify({ data: { name: "Fast" } }), { ...json, Cookie: s.session })],
    ["session update", post(pair, "/auth/session", JSON.stringify({ csrfToken: s.csrfToken, data: { name: "Fast" } }), { ...json, Cookie: both })],
    ["session update, form", post(pair, "/auth/session", new URLSearchParams({ csrfToken: s.csrfToken, "data[name]": "Fast" }).toString(), { ...form, Cookie: both })],
    ["session update, bad field", post(pair, "/auth/session", JSON.stringify({ csrfToken: s.csrfToken, data: { email: "x@y.z" } }), { ...json, Cookie: both })],
    ["session update, foreign Origin", post(pair, "/auth/session", JSON.stringify({ csrfToken: s.csrfToken, data: { name: "Evil" } }), { ...json, Cookie: both, Origin: "https://evil.example" })],
    ["session update, null Origin", post(pair, "/auth/session", "{}", { ...json, Cookie: both, Origin: "null" })],
    ["session update, own Origin", post(pair, "/auth/session", JSON.stringify({ csrfToken: s.csrfToken, data: { name: "Fast" } }), { ...json, Cookie: both, Origin: `http://${pair.host}` })],
    ["session update, wrong type", post(pair, "/auth/session", "<x/>", { "Content-Type": "text/xml", Cookie: both })],
    ["session update, malformed JSON", post(pair, "/auth/session", "{", { ...json, Cookie: both })],
    ["session update, NUL", post(pair, "/auth/session", JSON.stringify({ csrfToken: s.csrfToken, data: { name: "a\u0000b" } }), { ...json, Cookie: both })],
    ["session update, too large", post(pair, "/auth/session", `{"x":"${"a".repeat(70 * 1024)}"}`, { ...json, Cookie: both })],
    ["session update, chunked body", chunkedPost(pair, "/auth/session", JSON.stringify({ csrfToken: s.csrfToken, data: { name: "Fast" } }), { ...json, Cookie: both })],
    ["csrf, no cookie", get(pair, "/auth/csrf")],
    ["csrf, valid cookie", get(pair, "/auth/csrf", { Cookie: s.csrfCookie })],
    ["csrf, forged cookie", get(pair, "/auth/csrf", { Cookie: `authjs.csrf-token=${"a".repeat(64)}%7C${"b".repeat(64)}` })],
    ["csrf, HEAD", get(pair, "/auth/csrf", { Cookie: s.csrfCookie }, "HEAD")],
    ["csrf, POST", post(pair, "/auth/csrf", "a=1", { ...form, Cookie: s.csrfCookie })],
    ["csrf, query", get(pair, "/auth/csrf?callbackUrl=https://evil.example", { Cookie: s.csrfCookie })],
    ["providers", get(pair, "/auth/providers")],
    ["providers, signed in, query", get(pair, "/auth/providers?x=1", { Cookie: both })],
    ["providers, HEAD", get(pair, "/auth/providers", {}, "HEAD")],
    ["providers, POST", post(pair, "/auth/providers", "", form)],
    ["providers, POST from another site", post(pair, "/auth/providers", "", { ...form, Origin: "https://evil.example" })],
    ["log, GET", get(pair, "/auth/_log")],
    ["log", post(pair, "/auth/_log", new URLSearchParams({ csrfToken: s.csrfToken, level: "warn", code: "fast-path-test", message: "hello", metadata: '{"a":1}' }).toString(), { ...form, Cookie: s.csrfCookie })],
    ["log, JSON", post(pair, "/auth/_log", JSON.stringify({ csrfToken: s.csrfToken, level: "debug", code: "fast-path-test" }), { ...json, Cookie: s.csrfCookie })],
    ["log, no CSRF", post(pair, "/auth/_log", "level=warn&code=x", form)],
    ["log, bad level", post(pair, "/auth/_log", new URLSearchParams({ csrfToken: s.csrfToken, level: "fatal", code: "x" }).toString(), { ...form, Cookie: s.csrfCookie })],
    ["log, over 4 KiB", post(pair, "/auth/_log", `level=warn&code=x&message=${"a".repeat(5000)}`, { ...form, Cookie: s.csrfCookie })],
    ["log, wrong type", post(pair, "/auth/_log", "x", { "Content-Type": "text/plain", Cookie: s.csrfCookie })],
    ["log, chunked body", chunkedPost(pair, "/auth/_log", new URLSearchParams({ csrfToken: s.csrfToken, level: "warn", code: "chunked" }).toString(), { ...form, Cookie: s.csrfCookie })],
    ["log, foreign Origin", post(pair, "/auth/_log", new URLSearchParams({ csrfToken: s.csrfToken, level: "warn", code: "x" }).toString(), { ...form, Cookie: s.csrfCookie, Origin: "https://evil.example" })],
    ["api/me, no token", get(pair, "/api/me")],
    ["api/me, a cookie but no token", get(pair, "/api/me", { Cookie: s.session })],
    ["api/me, not a JWT", get(pair, "/api/me", { Authorization: "Bearer not-a-token" })],
    ["api/me, Basic", get(pair, "/api/me", { Authorization: "Basic dXNlcjpwYXNz" })],
    ["api/me, HEAD", get(pair, "/api/me", {}, "HEAD")],
    ["api/me, from another origin", get(pair, "/api/me", { Origin: "https://inspector.example" })],
    ["api/me, OPTIONS", get(pair, "/api/me", { Origin: "https://inspector.example", "Access-Control-Request-Method": "GET" }, "OPTIONS")],
    ["api/me, POST", post(pair, "/api/me", "", form)],
    ["api/me, trailing slash (full pipeline)", get(pair, "/api/me/")],
    ["unknown auth path", get(pair, "/auth/nothing")],
    ["healthz", get(pair, "/healthz")],
  ];
  for (const [name, request] of cases) await expectSameAnswer(pair, name, request);
}

const apps: RunningApp[] = [];
afterAll(async () => {
  // The fast server owns the shared data folder: stop the other first.
  for (const app of apps.reverse()) await app.stop();
});

describe("fast path ≡ React Router's pipeline, jwt sessions", () => {
  let pair: Pair;
  let userId: string;
  beforeAll(async () => {
    pair = await startPair("jwt");
    apps.push(pair.fast, pair.full);
    userId = (await seedUser(pair.fast, { email: EMAIL, password: PASSWORD, name: "Fast" })).id;
  });

  it("answers every request of the corpus with the same bytes", async () => {
    const signedIn = await signIn(pair);
    await commonCorpus(pair, signedIn);

    const secret = pair.fast.env.AUTH_SECRET!;
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    // The user's own id: a cookie naming no user is ended when it would roll (a deleted account, ADR 086).
    const claims = { name: "Fast", email: EMAIL, picture: null, sub: userId };
    // A cookie past its update age rolls (a new JWE and Set-Cookie); one minted by Auth.js has no sid.
    const old = await encodeJwt({ payload: { ...claims, sid: "fast-path-roll" }, secrets: [secret], salt: COOKIE, maxAge: 30 * 86_400, now: twoDaysAgo });
    const rolled = await expectSameAnswer(pair, "session, rolling", get(pair, "/auth/session", { Cookie: `${COOKIE}=${old}` }));
    expect(rolled).toMatch(/set-cookie: authjs\.session-token=<jwe>/i);
    // Over 4 KiB: written and read as chunks .0, .1, …
    const big = await encodeJwt({ payload: { ...claims, name: "N".repeat(5000) }, secrets: [secret], salt: COOKIE, maxAge: 86_400 });
    const chunks = [big.slice(0, CHUNK_SIZE), big.slice(CHUNK_SIZE)];
    const chunked = await expectSameAnswer(pair, "session, chunked cookie", get(pair, "/auth/session", { Cookie: chunks.map((c, i) => `${COOKIE}.${i}=${c}`).join("; ") }));
    expect(chunked).toContain('"name":"NNNN');
    const oldChunked = await encodeJwt({ payload: { ...claims, name: "N".repeat(5000) }, secrets: [secret], salt: COOKIE, maxAge: 30 * 86_400, now: twoDaysAgo });
    await expectSameAnswer(pair, "session, chunked cookie, rolling", get(pair, "/auth/session", { Cookie: [oldChunked.slice(0, CHUNK_SIZE), oldChunked.slice(CHUNK_SIZE)].map((c, i) => `${COOKIE}.${i}=${c}`).join("; ") }));
    await expectSameAnswer(pair, "session, chunk missing", get(pair, "/auth/session", { Cookie: `${COOKIE}.1=${chunks[1]}` }));
    const expired = await encodeJwt({ payload: claims, secrets: [secret], salt: COOKIE, maxAge: 60, now: twoDaysAgo });
    await expectSameAnswer(pair, "session, expired", get(pair, "/auth/session", { Cookie: `${COOKIE}=${expired}` }));
    await expectSameAnswer(pair, "session, tampered", get(pair, "/auth/session", { Cookie: `${COOKIE}=${old.slice(0, -4)}AAAA` }));

    // GET /api/me with a token signed by the app's own key (read from its database here).
    const undo = withEnv({ VESTIBULE_DATA_DIR: pair.fast.dataDir, AUTH_SECRET: secret, AUTH_URL: pair.fast.env.AUTH_URL, AUTH_PROVIDER: "true", DATABASE_URL: undefined });
    let token: string;
    let forMcp: string;
    try {
      await grantAccess(userId);
      token = await mintAccessToken(`${pair.fast.env.AUTH_URL}/api`, userId, "openid email profile");
      forMcp = await mintAccessToken(`${pair.fast.env.AUTH_URL}/mcp`, userId, "openid email profile");
    } finally {
      undo();
    }
    const me = await expectSameAnswer(pair, "api/me, a valid token", get(pair, "/api/me", { Authorization: `Bearer ${token}` }));
    expect(me).toContain(`"email":"${EMAIL}"`);
    await expectSameAnswer(pair, "api/me, a valid token, HEAD", get(pair, "/api/me", { Authorization: `Bearer ${token}` }, "HEAD"));
    await expectSameAnswer(pair, "api/me, a token for /mcp", get(pair, "/api/me", { Authorization: `Bearer ${forMcp}` }));
  });

  it("takes the fast path for the five endpoints, and only those", async () => {
    const { createFastPath, FAST_PATHS } = await import("../../server/fast-path.ts");
    const build = await import(/* @vite-ignore */ path.resolve("build/server/index.js"));
    expect(createFastPath(build).paths).toEqual(FAST_PATHS);
    expect(FAST_PATHS).toEqual(["/auth/session", "/auth/csrf", "/auth/providers", "/auth/_log", "/api/me"]);
  });
});

describe("fast path ≡ React Router's pipeline, database sessions", () => {
  let pair: Pair;
  beforeAll(async () => {
    pair = await startPair("database");
    apps.push(pair.fast, pair.full);
    await seedUser(pair.fast, { email: EMAIL, password: PASSWORD, name: "Fast" });
  });

  it("answers every request of the corpus with the same bytes, rolling included", async () => {
    const signedIn = await signIn(pair);
    await commonCorpus(pair, signedIn);

    // Rolling: the row's expiry is set back past the update age before each of the two requests,
    // so both servers roll it (re-issue the cookie with a fresh expiry, write the row).
    // A session of its own, read by neither server before (no copy held in memory anywhere).
    const fresh = await signIn(pair);
    const file = new Database(path.join(pair.fast.dataDir, SQLITE_FILE_NAME));
    try {
      const ageRow = () => {
        const expires = new Date(Date.now() + 27 * 86_400_000).toISOString().replace("Z", "+00:00");
        const lastUsed = new Date(Date.now() - 2 * 86_400_000).toISOString().replace("Z", "+00:00");
        file.prepare("UPDATE Session SET expires = ?, lastUsedAt = ? WHERE kind = 'database'").run(expires, lastUsed);
      };
      const rolled = await expectSameAnswer(pair, "session, rolling", get(pair, "/auth/session", { Cookie: fresh.session }), ageRow);
      expect(rolled).toMatch(/set-cookie: authjs\.session-token=/i);
    } finally {
      file.close();
    }
    await expectSameAnswer(pair, "session, unknown token", get(pair, "/auth/session", { Cookie: `${COOKIE}=${"A".repeat(43)}` }));
    await expectSameAnswer(pair, "session, chunks of a jwt", get(pair, "/auth/session", { Cookie: `${COOKIE}.0=abc; ${COOKIE}.1=def` }));
  });
});
