// Any cookie value, of any characters, reads as absent or invalid, never as an
// error. Property-based: arbitrary Unicode and bytes (raw, percent-encoded, percent-encoded
// invalid UTF-8, and mutations of real values) in every cookie the app reads, on every route of
// §3 and every app page, called through the route modules as the server would. No answer ≥ 500.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { COOKIE_KEYS, cookieNames } from "../../../app/auth/core/cookies.server";
import * as rootRoute from "../../../app/root";
import * as accountRoute from "../../../app/routes/account";
import * as accountEmailRoute from "../../../app/routes/account-email";
import * as callbackEmailRoute from "../../../app/routes/auth/callback-email";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as csrfRoute from "../../../app/routes/auth/csrf";
import * as errorRoute from "../../../app/routes/auth/error";
import * as logRoute from "../../../app/routes/auth/log";
import * as providersRoute from "../../../app/routes/auth/providers";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as signinProviderRoute from "../../../app/routes/auth/signin-provider";
import * as signinRoute from "../../../app/routes/auth/signin";
import * as signoutRoute from "../../../app/routes/auth/signout";
import * as unknownRoute from "../../../app/routes/auth/unknown";
import * as verifyRequestRoute from "../../../app/routes/auth/verify-request";
import * as homeRoute from "../../../app/routes/home";
import * as welcomeRoute from "../../../app/routes/welcome";
import { createUser, PASSWORD, signIn, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http";
import { startTestIdp, type TestIdp } from "../../support/idp";
import { startSmtpSink, type SmtpSink } from "../../support/smtp-sink";
import { authorizationUrlOf, startSignIn } from "../../support/oauth-flow";

type Handler = (...args: any[]) => unknown;
type RouteModule = { loader?: Handler; action?: Handler; middleware?: readonly Handler[] };

/** What one request to a route looks like; `body` gets the jar's CSRF token added. */
type Call = {
  name: string;
  route: RouteModule;
  method: "GET" | "POST";
  path: string;
  params?: Record<string, string>;
  body?: Record<string, string>;
  json?: boolean;
};

// Filled in beforeAll: the OAuth state of a real pending flow, so callbacks reach the check cookies.
let pendingState = "";

function calls(): Call[] {
  const oidcCallback = `/auth/callback/oidc?code=not-a-code&state=${pendingState}`;
  return [
    { name: "GET /", route: homeRoute, method: "GET", path: "/" },
    { name: "root layout", route: rootRoute, method: "GET", path: "/account" },
    { name: "GET /account", route: accountRoute, method: "GET", path: "/account" },
    { name: "POST /account update-profile", route: accountRoute, method: "POST", path: "/account", body: { intent: "update-profile", name: "Ada L." } },
    { name: "POST /account revoke-all", route: accountRoute, method: "POST", path: "/account", body: { intent: "revoke-all" } },
    { name: "GET /account/email", route: accountEmailRoute, method: "GET", path: "/account/email?token=t&email=new%40example.com" },
    { name: "POST /account/email", route: accountEmailRoute, method: "POST", path: "/account/email", body: { token: "t", email: "new@example.com" } },
    { name: "GET /welcome", route: welcomeRoute, method: "GET", path: "/welcome?callbackUrl=%2Faccount" },
    { name: "GET /auth/providers", route: providersRoute, method: "GET", path: "/auth/providers" },
    { name: "GET /auth/session", route: sessionRoute, method: "GET", path: "/auth/session" },
    { name: "POST /auth/session", route: sessionRoute, method: "POST", path: "/auth/session", body: { data: JSON.stringify({}) } },
    { name: "POST /auth/session json", route: sessionRoute, method: "POST", path: "/auth/session", json: true, body: {} },
    { name: "GET /auth/csrf", route: csrfRoute, method: "GET", path: "/auth/csrf" },
    { name: "GET /auth/signin", route: signinRoute, method: "GET", path: "/auth/signin?callbackUrl=%2Faccount" },
    { name: "POST /auth/signin", route: signinRoute, method: "POST", path: "/auth/signin", body: {} },
    { name: "POST /auth/signin json", route: signinRoute, method: "POST", path: "/auth/signin", body: { json: "true" } },
    { name: "POST /auth/signin/oidc", route: signinProviderRoute, method: "POST", path: "/auth/signin/oidc", params: { provider: "oidc" }, body: { callbackUrl: "/account" } },
    { name: "POST /auth/signin/email", route: signinProviderRoute, method: "POST", path: "/auth/signin/email", params: { provider: "email" }, body: { email: "ada@example.com" } },
    { name: "POST /auth/signin/credentials", route: signinProviderRoute, method: "POST", path: "/auth/signin/credentials", params: { provider: "credentials" } },
    { name: "GET /auth/signout", route: signoutRoute, method: "GET", path: "/auth/signout" },
    { name: "POST /auth/signout", route: signoutRoute, method: "POST", path: "/auth/signout", body: { callbackUrl: "/" } },
    { name: "POST /auth/signout json", route: signoutRoute, method: "POST", path: "/auth/signout", body: { json: "true" } },
    { name: "GET /auth/callback/oidc", route: callbackRoute, method: "GET", path: oidcCallback, params: { provider: "oidc" } },
    { name: "POST /auth/callback/oidc form_post", route: callbackRoute, method: "POST", path: "/auth/callback/oidc", params: { provider: "oidc" }, body: { code: "not-a-code", state: pendingState } },
    { name: "POST /auth/callback/credentials", route: callbackRoute, method: "POST", path: "/auth/callback/credentials", params: { provider: "credentials" }, body: { email: "ada@example.com", password: PASSWORD } },
    { name: "GET /auth/callback/email", route: callbackEmailRoute, method: "GET", path: "/auth/callback/email?token=t&email=ada%40example.com&callbackUrl=%2F" },
    { name: "POST /auth/callback/email", route: callbackEmailRoute, method: "POST", path: "/auth/callback/email", body: { token: "t", email: "ada@example.com" } },
    { name: "GET /auth/verify-request", route: verifyRequestRoute, method: "GET", path: "/auth/verify-request?provider=email&type=email" },
    { name: "GET /auth/error", route: errorRoute, method: "GET", path: "/auth/error?error=Verification" },
    { name: "POST /auth/_log", route: logRoute, method: "POST", path: "/auth/_log", body: { level: "warn", code: "fuzz" } },
    { name: "GET /auth/nope", route: unknownRoute, method: "GET", path: "/auth/nope" },
  ];
}

/** Every cookie name the app reads, per cookie: plain, __Secure- and __Host- prefixed, and chunks .0/.1. */
function readCookieNames(): string[][] {
  return COOKIE_KEYS.map((key) => {
    const plain = cookieNames(false)[key];
    const names = new Set<string>();
    for (const name of [plain, cookieNames(true)[key], `__Secure-${plain}`, `__Host-${plain}`]) names.add(name).add(`${name}.0`).add(`${name}.1`);
    return [...names];
  });
}

/** Runs the route's middleware (as React Router does) around its loader or action. */
async function run(call: Call, request: Request): Promise<Response> {
  const fn = call.method === "GET" ? call.route.loader : call.route.action;
  if (!fn) throw new Error(`${call.name}: no handler`);
  const terminal = () => callRoute(fn, request, call.params);
  const chain = (call.method === "POST" ? (call.route.middleware ?? []) : []).reduceRight<() => Promise<Response>>(
    (next, mw) => () => callRoute((args) => mw(args, next), request, call.params),
    terminal,
  );
  return chain();
}

// --- cookie values -------------------------------------------------------------------------

const percentEncodeBytes = (bytes: Uint8Array) => [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
/** What a raw byte sequence in the Cookie header looks like to the server (Node decodes headers as latin1). */
const asHeaderText = (bytes: Uint8Array) => Buffer.from(bytes.filter((b) => b !== 0x0d && b !== 0x0a && b !== 0x00)).toString("latin1");
const hex = (n: number) => fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: n, maxLength: n });

/** A cookie value as it appears in the header (already encoded as the client chose). */
function headerValue(realValues: string[]): fc.Arbitrary<string> {
  const unicode = fc.string({ unit: "binary", maxLength: 200 });
  const bytes = fc.uint8Array({ maxLength: 200 });
  const mutated =
    realValues.length === 0
      ? fc.constant("")
      : fc
          .tuple(fc.constantFrom(...realValues), fc.nat(), fc.string({ unit: "binary", minLength: 1, maxLength: 3 }))
          .map(([v, at, ins]) => encodeURIComponent(v.slice(0, at % (v.length + 1)) + ins + v.slice((at % (v.length + 1)) + 1)));
  return fc.oneof(
    unicode.map(encodeURIComponent),
    bytes.map(percentEncodeBytes),
    bytes.map(asHeaderText).map((s) => s.trim()),
    // Same character count as a real CSRF cookie, more bytes: 64 hex | 63 hex + one multi-byte character.
    fc.tuple(hex(64), hex(63), fc.oneof(fc.constantFrom("é", "€", "💩"), fc.string({ unit: "binary", minLength: 1, maxLength: 1 }))).map(([t, h, c]) => encodeURIComponent(`${t}|${h}${c}`)),
    // JWE-shaped: five dot-separated parts of arbitrary text.
    fc.array(fc.string({ unit: "binary", maxLength: 40 }), { minLength: 5, maxLength: 5 }).map((p) => encodeURIComponent(p.join("."))),
    // A real value with a character replaced by anything, and a real value truncated by bytes.
    mutated,
    realValues.length ? fc.tuple(fc.constantFrom(...realValues), bytes).map(([v, b]) => percentEncodeBytes(Buffer.concat([Buffer.from(v), b]))) : fc.constant(""),
  );
}

const ORIGINS = { http: "http://localhost:3000", https: "https://localhost:3000" } as const;

let idp: TestIdp;
let smtp: SmtpSink;
let quietLogs: string | undefined;
let undoEnv: (() => void) | null = null;
/** A signed-in browser (jwt and database strategies) with a pending OAuth flow: real values to replace. */
const baseJars: Record<"jwt" | "database", CookieJar> = { jwt: new CookieJar(), database: new CookieJar() };

beforeAll(async () => {
  // Thousands of refused requests would each log a line.
  quietLogs = process.env.VESTIBULE_LOG;
  process.env.VESTIBULE_LOG = "silent";
  idp = await startTestIdp();
  smtp = await startSmtpSink();
  idp.configure({ AUTH_EMAIL_SERVER: smtp.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>" });
  await resetDatabase();
  await createUser();
  for (const strategy of ["jwt", "database"] as const) {
    const undo = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    const { jar } = await signIn();
    const started = await startSignIn(jar, "oidc", { callbackUrl: "/account" });
    pendingState = new URL(await authorizationUrlOf(started)).searchParams.get("state")!;
    baseJars[strategy] = jar;
    undo();
  }
});
afterAll(() => {
  if (quietLogs === undefined) delete process.env.VESTIBULE_LOG;
  else process.env.VESTIBULE_LOG = quietLogs;
  undoEnv?.();
  for (const name of ["AUTH_OIDC_ISSUER", "AUTH_OIDC_ID", "AUTH_OIDC_SECRET", "AUTH_OIDC_NAME", "AUTH_EMAIL_SERVER", "AUTH_EMAIL_FROM"]) delete process.env[name];
  idp?.stop();
  return smtp?.close();
});

/**
 * Sign-out and "sign out everywhere" end the base browser's database session when the fuzzed
 * cookies leave it intact; sign it in again so later runs still reach the signed-in code paths.
 */
async function keepSignedIn(strategy: "jwt" | "database") {
  // Hundreds of sign-in attempts from one address: without this, the rate limits would answer
  // most runs before any cookie is read.
  await testDb().limitCounter.deleteMany();
  const res = await callRoute(sessionRoute.loader, get("/auth/session", { jar: baseJars[strategy] }));
  if ((await res.json()) !== null) return;
  await signIn(baseJars[strategy]);
}

/** A request for `call` from a browser with the base jar's cookies, then `overrides` on top. */
function requestFor(call: Call, jar: CookieJar, overrides: [string, string][], origin: string): Request {
  const cookies = new CookieJar();
  for (const name of jar.names()) cookies.set(name, jar.get(name)!);
  // The https browser carries the same values under the prefixed names.
  if (origin.startsWith("https:")) {
    for (const key of COOKIE_KEYS) {
      const value = jar.get(cookieNames(false)[key]);
      if (value !== undefined) cookies.set(cookieNames(true)[key], value);
    }
  }
  for (const [name, value] of overrides) cookies.set(name, value);
  const csrfToken = decodeURIComponent(jar.get(cookieNames(false).csrfToken) ?? "").split("|")[0]!;
  // The header is sent as it is: Headers only refuses CR, LF and NUL, which no client can send.
  const headers = { Origin: origin };
  if (call.method === "GET") return get(call.path, { jar: cookies, origin, headers });
  return post(call.path, { csrfToken, ...call.body }, { jar: cookies, origin, headers, json: call.json });
}

describe(`cookie values never cause a server error (${dbLabel})`, () => {
  test("a CSRF cookie whose hash is 63 hex digits and one é is replaced, not a 500", async () => {
    const value = `${"a".repeat(64)}%7C${"0".repeat(63)}%C3%A9`;
    for (const call of calls().filter((c) => ["GET /auth/csrf", "GET /auth/signin", "POST /auth/signout"].includes(c.name))) {
      const jar = new CookieJar({ "authjs.csrf-token": value });
      const res = await run(call, requestFor(call, jar, [], ORIGINS.http));
      expect(res.status, call.name).toBeLessThan(500);
    }
    const res = await run(calls().find((c) => c.name === "GET /auth/csrf")!, get("/auth/csrf", { jar: new CookieJar({ "authjs.csrf-token": value }) }));
    expect(res.headers.getSetCookie()[0]).toMatch(/^authjs\.csrf-token=/);
  });

  test("every route × every cookie with bytes that are not UTF-8 or not the expected size", async () => {
    const nasty = [`${"a".repeat(64)}%7C${"0".repeat(63)}%C3%A9`, "%C3%28%FF%FE", "\u00c3\u00a9\u00ff", "%00%E2%80%AE..%F0%9F%92%A9"];
    // Each route meets each cookie under one of its names, in turn, so that over the routes every
    // name (plain, prefixed, chunk) is tried; the property below tries everything else.
    for (const [c, call] of calls().entries()) {
      for (const [k, group] of readCookieNames().entries()) {
        const name = group[c % group.length]!;
        const value = nasty[(c + k) % nasty.length]!;
        const strategy = (c + k) % 2 ? "jwt" : "database";
        undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy });
        const origin = name.startsWith("__") ? ORIGINS.https : ORIGINS.http;
        const res = await run(call, requestFor(call, baseJars[strategy], [[name, value]], origin));
        expect(res.status, `${call.name} ${strategy} ${name}=${value}`).toBeLessThan(500);
        await keepSignedIn(strategy);
        undoEnv();
        undoEnv = null;
      }
    }
  });

  test("property: arbitrary values in any cookies on any route answer below 500", async () => {
    const groups = readCookieNames();
    // Mostly the name the request's scheme reads (the first of a group, plain or prefixed), often
    // a chunk or the other prefix, which must be ignored or read just as safely.
    const nameFor = (scheme: "http" | "https") =>
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...COOKIE_KEYS.map((key) => cookieNames(scheme === "https")[key])) },
        { weight: 2, arbitrary: fc.constantFrom(...groups.flat()) },
      );
    const realValues = [...new Set(Object.values(baseJars).flatMap((jar) => jar.names().map((n) => decodeURIComponent(jar.get(n)!))))];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...calls()),
        fc.constantFrom("jwt" as const, "database" as const),
        fc
          .constantFrom("http" as const, "https" as const)
          .chain((scheme) =>
            fc.tuple(fc.constant(scheme), fc.array(fc.tuple(nameFor(scheme), headerValue(realValues)), { minLength: 1, maxLength: 4 })),
          ),
        async (call, strategy, [scheme, overrides]) => {
          undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy });
          try {
            const res = await run(call, requestFor(call, baseJars[strategy], overrides, ORIGINS[scheme]));
            expect(res.status, call.name).toBeLessThan(500);
            await keepSignedIn(strategy);
          } finally {
            undoEnv();
            undoEnv = null;
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe(`body values never cause a server error (${dbLabel})`, () => {
  const callback = calls().find((c) => c.name === "POST /auth/callback/credentials")!;

  /** A refused password with `email` typed, as a form or a JSON body; the error code it lands on. */
  async function refusedWith(email: string, json: boolean): Promise<string | null> {
    await testDb().limitCounter.deleteMany();
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    const body = { csrfToken, email, password: "not the password" };
    const res = await run(callback, post(callback.path, body, { jar, json, headers: { Origin: ORIGINS.http } }));
    expect(res.status, JSON.stringify(email)).toBe(302);
    return new URL(res.headers.get("Location")!).searchParams.get("error");
  }

  test("an address cut inside a surrogate pair (253 × a + 😀), and a lone surrogate in JSON: CredentialsSignin, not Configuration", async () => {
    expect(await refusedWith("a".repeat(253) + "😀", false)).toBe("CredentialsSignin");
    expect(await refusedWith("a".repeat(253) + "😀", true)).toBe("CredentialsSignin");
    expect(await refusedWith("\ud800", true)).toBe("CredentialsSignin");
    expect(await refusedWith("ada@example.com\udc00", true)).toBe("CredentialsSignin");
  });

  test("property: any typed address with a wrong password lands on CredentialsSignin", async () => {
    const anyUtf16 = fc.oneof(
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 1, maxLength: 300 }).map((units) => String.fromCharCode(...units)),
      fc.tuple(fc.nat({ max: 260 }), fc.string({ unit: "binary", minLength: 1, maxLength: 3 })).map(([n, tail]) => "a".repeat(n) + tail),
    );
    await fc.assert(
      // NUL never gets this far: the body reader refuses it with 400 (a test of its own covers that).
      fc.asyncProperty(anyUtf16.filter((email) => !email.includes("\u0000")), fc.boolean(), async (email, json) => {
        // A form body cannot carry a lone surrogate (URLSearchParams writes U+FFFD); JSON can.
        expect(await refusedWith(email, json)).toBe("CredentialsSignin");
      }),
      { numRuns: 150 },
    );
  });
});

