// Every outcome of the e-mail code and password-page POSTs, in both shapes a client sends them
// ("A right code behaves as the link would (the same landing, JSON mode
// {"url"} included)"): the HTML form post, and the Auth.js JSON client (`X-Auth-Return-Redirect: 1`
// header, or `json=true` in the body). Sent through React Router's own request handler
// (tests/support/app-handler.ts), so a route that throws a JSON answer as an error shows here as
// the "Server error" page it would be in production.
import { beforeAll, describe, expect, it } from "vitest";
import { appHandler } from "../../support/app-handler.ts";
import { createUser } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { linkIn, type ReceivedMessage } from "../../support/smtp-sink.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { codeIn } from "./helpers.ts";

const smtp = useSmtpSink();
const CHOSEN = "velvet lantern orbit";
let handle: (request: Request) => Promise<Response>;
beforeAll(async () => {
  handle = await appHandler();
});

type Shape = "form" | "header" | "body";
const SHAPES: Shape[] = ["form", "header", "body"];

/** One request through the whole app, with the jar's cookies; the answer's cookies go into the jar. */
async function send(jar: CookieJar, path: string, fields?: Record<string, string>, shape: Shape = "form"): Promise<Response> {
  const body = fields ? { ...fields, ...(shape === "body" ? { json: "true" } : {}) } : undefined;
  const res = await handle(
    new Request(ORIGIN + path, {
      method: body ? "POST" : "GET",
      headers: {
        Cookie: jar.header(),
        Origin: ORIGIN,
        ...(body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
        ...(shape === "header" ? { "X-Auth-Return-Redirect": "1" } : {}),
      },
      body: body ? new URLSearchParams(body) : undefined,
      redirect: "manual",
    }),
  );
  jar.apply(res);
  return res;
}

async function csrf(jar: CookieJar): Promise<string> {
  return ((await (await send(jar, "/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
}

/** The answer as the shape expects it: a 302 to `target`, or 200 `{"url": target}`. */
async function expectLanding(res: Response, shape: Shape, target: string | RegExp) {
  const matches = (url: string) => (typeof target === "string" ? expect(url).toBe(target) : expect(url).toMatch(target));
  if (shape === "form") {
    expect(res.status).toBe(302);
    matches(res.headers.get("Location")!);
    return;
  }
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
  const body = (await res.json()) as { url: string };
  matches(body.url);
}

/** A refused code's form answer: a redirect back to the code form, and that page (200) as the browser then gets it. */
async function followRefusal(jar: CookieJar, res: Response): Promise<Response> {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("Location")!);
  expect(location.pathname).toBe("/auth/verify-request");
  const page = await send(jar, location.pathname + location.search);
  expect(page.status).toBe(200);
  return page;
}

/** What the page draws: its scripts left out (the hydration data carries the page's whole catalogue, the error page's heading among its texts). */
const drawn = (html: string) => html.replace(/<script\b[\s\S]*?<\/script>/g, "");

/** A refused field: the HTML form again for a form post, a JSON answer for a JSON client; never the error page. */
async function expectRefused(res: Response, shape: Shape, status: number, field: string | null, text: RegExp) {
  expect(res.status).toBe(status);
  if (shape === "form") {
    expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(drawn(html)).not.toMatch(/Server error/);
    if (field) expect(html).toContain(`data-error-for="${field}"`);
    expect(html).toMatch(text);
    return;
  }
  expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
  const body = await res.text();
  expect(body).toMatch(text);
  if (field) expect(JSON.parse(body)).toMatchObject({ fieldErrors: { [field]: expect.any(String) } });
}

/**
 * A refusal of what was typed on a page of its own (the reset's code form, the link's form): for a
 * form post, a redirect back to that page (Back never lands on a POST), which draws the refusal;
 * for a JSON client, the 400 as before.
 */
async function expectRefusedAgain(jar: CookieJar, res: Response, shape: Shape, field: string, text: RegExp, shows?: RegExp) {
  if (shape !== "form") return expectRefused(res, shape, 400, field, text);
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("Location")!);
  expect(location.searchParams.get("refused")).toMatch(/^(wrong|required|password|address)$/);
  const page = await send(jar, location.pathname + location.search);
  if (shows) expect(await page.clone().text()).toMatch(shows);
  await expectRefused(page, shape, 200, field, text);
}

async function signInRequest(jar: CookieJar, email = "sam@example.com"): Promise<ReceivedMessage> {
  const before = smtp.sink.messages.length;
  const res = await send(jar, "/auth/signin/email", { csrfToken: await csrf(jar), email, callbackUrl: "/account" });
  expect(res.status).toBe(302);
  return (await smtp.sink.waitFor(before + 1)).at(-1)!;
}

/** The first message to `address` (a previous test's background e-mails may still arrive after the sink was cleared). */
async function messageTo(address: string): Promise<ReceivedMessage> {
  for (let count = 1; ; count++) {
    const found = (await smtp.sink.waitFor(count)).find((m) => m.envelope.to.includes(address));
    if (found) return found;
  }
}

const otherCode = (code: string) => (code === "000000" ? "000001" : "000000");

describe(`POST /auth/callback/email with a code, every outcome, form and JSON (${dbLabel})`, () => {
  for (const shape of SHAPES) {
    it(`${shape}: the right code signs in and lands as the link would`, async () => {
      const jar = new CookieJar();
      const message = await signInRequest(jar);
      const res = await send(jar, "/auth/callback/email", { csrfToken: await csrf(jar), code: codeIn(message) }, shape);
      await expectLanding(res, shape, `${ORIGIN}/welcome?callbackUrl=%2Faccount`);
      expect(res).toHaveSessionCookie();
    });

    it(`${shape}: a wrong code says how many tries are left, and uses nothing else up`, async () => {
      const jar = new CookieJar();
      const message = await signInRequest(jar);
      const answer = await send(jar, "/auth/callback/email", { csrfToken: await csrf(jar), code: otherCode(codeIn(message)) }, shape);
      // A form post comes back to the code form by a redirect (Back never lands on a POST); JSON clients get the 400.
      const res = shape === "form" ? await followRefusal(jar, answer) : answer;
      if (shape !== "form") expect(res.status).toBe(400);
      const body = await res.text();
      expect(drawn(body)).not.toMatch(/Server error/);
      expect(body).toMatch(/4 tries are left/);
      if (shape === "form") expect(body).toContain('data-error-for="code"');
      else expect(JSON.parse(body)).toMatchObject({ error: "code", triesLeft: 4 });
    });

    it(`${shape}: an expired code is Verification`, async () => {
      const jar = new CookieJar();
      const message = await signInRequest(jar);
      await testDb().verificationToken.updateMany({ data: { codeExpires: new Date(Date.now() - 1000) } });
      const res = await send(jar, "/auth/callback/email", { csrfToken: await csrf(jar), code: codeIn(message) }, shape);
      await expectLanding(res, shape, `${ORIGIN}/auth/error?error=Verification`);
    });

    it(`${shape}: over the wrong-code budget of the address a wrong code is RateLimited and ends the request; the right code is still proved on a request of its own`, async () => {
      configure(smtpEnv(smtp.sink.url, { AUTH_RATE_LIMIT_EMAIL_CODE_ADDRESS: "2/3600" }));
      const jar = new CookieJar();
      const message = await signInRequest(jar);
      for (let i = 0; i < 2; i++) {
        const refused = await send(jar, "/auth/callback/email", { csrfToken: await csrf(jar), code: otherCode(codeIn(message)) }, shape);
        if (shape === "form") await followRefusal(jar, refused);
        else expect(refused.status).toBe(400);
      }
      const res = await send(jar, "/auth/callback/email", { csrfToken: await csrf(jar), code: otherCode(codeIn(message)) }, shape);
      await expectLanding(res, shape, /\/auth\/signin\?error=RateLimited/);
      expect(res.headers.get("Retry-After")).toMatch(/^\d+$/);
      expect(res).not.toHaveSessionCookie();
      const ended = await send(jar, "/auth/callback/email", { csrfToken: await csrf(jar), code: codeIn(message) }, shape);
      await expectLanding(ended, shape, `${ORIGIN}/auth/error?error=Verification`);
      const owner = new CookieJar();
      const mine = await signInRequest(owner);
      expect(await send(owner, "/auth/callback/email", { csrfToken: await csrf(owner), code: codeIn(mine) }, shape)).toHaveSessionCookie();
    });

    it(`${shape}: without the CSRF token nothing happens (MissingCSRF)`, async () => {
      const jar = new CookieJar();
      const message = await signInRequest(jar);
      const res = await send(jar, "/auth/callback/email", { code: codeIn(message) }, shape);
      await expectLanding(res, shape, `${ORIGIN}/auth/signin?error=MissingCSRF`);
      expect((await testDb().verificationToken.findFirstOrThrow()).codeAttempts).toBe(0);
    });
  }
});

describe(`the password pages' POSTs in JSON mode (${dbLabel})`, () => {
  for (const shape of SHAPES) {
    it(`${shape}: sign-up lands on verify-request; a refused password and a missing CSRF token are answered, not the error page`, async () => {
      const jar = new CookieJar();
      const ok = await send(jar, "/auth/signup", { csrfToken: await csrf(jar), email: "new@example.com", password: CHOSEN, callbackUrl: "/account" }, shape);
      await expectLanding(ok, shape, `${ORIGIN}/auth/verify-request?provider=email&type=signup`);
      const weak = await send(jar, "/auth/signup", { csrfToken: await csrf(jar), email: "new@example.com", password: "passwordpassword" }, shape);
      await expectRefused(weak, shape, 400, "password", /too common/);
      const forged = await send(new CookieJar(), "/auth/signup", { email: "new@example.com", password: CHOSEN }, shape);
      await expectRefused(forged, shape, 403, null, /expired/i);
    });

    it(`${shape}: forgotten password lands on verify-request; a bad address is a 400 on email`, async () => {
      await createUser();
      const jar = new CookieJar();
      const ok = await send(jar, "/auth/forgot-password", { csrfToken: await csrf(jar), email: "ada@example.com" }, shape);
      await expectLanding(ok, shape, `${ORIGIN}/auth/verify-request?provider=email&type=reset`);
      const bad = await send(jar, "/auth/forgot-password", { csrfToken: await csrf(jar), email: "two@@example.com" }, shape);
      await expectRefusedAgain(jar, bad, shape, "email", /e-mail address/, /id="forgot-email"[^>]*value="two@@example.com"/);
      if (shape === "form") {
        // The address as typed is kept by a cookie, never the URL, and shown once.
        expect(bad.headers.get("Location")).not.toContain("example.com");
        expect(jar.get("authjs.signin-email")).toBeUndefined();
      }
      let limited = ok;
      for (let i = 0; i < 6 && limited.status !== 429; i++) {
        limited = await send(jar, "/auth/forgot-password", { csrfToken: await csrf(jar), email: "ada@example.com" }, shape);
      }
      await expectRefused(limited, shape, 429, null, /We have sent several e-mails to this address recently/);
      expect(limited.headers.get("Retry-After")).toMatch(/^\d+$/);
    });

    it(`${shape}: reset by link and by code: right, refused password, wrong code, used link`, async () => {
      await createUser("reset@example.com");
      const jar = new CookieJar();
      await send(jar, "/auth/forgot-password", { csrfToken: await csrf(jar), email: "reset@example.com" }, "form");
      const message = await messageTo("reset@example.com");
      const link = linkIn(message!);
      const byLink = { token: link.searchParams.get("token")!, email: "reset@example.com" };
      const other = new CookieJar();
      const weak = await send(other, "/auth/reset-password", { csrfToken: await csrf(other), ...byLink, password: "passwordpassword" }, shape);
      await expectRefusedAgain(other, weak, shape, "password", /too common/);
      const wrong = await send(jar, "/auth/reset-password", { csrfToken: await csrf(jar), code: otherCode(codeIn(message!)), password: CHOSEN }, shape);
      await expectRefusedAgain(jar, wrong, shape, "code", /4 tries are left/);
      const weakByCode = await send(jar, "/auth/reset-password", { csrfToken: await csrf(jar), code: codeIn(message!), password: "passwordpassword" }, shape);
      await expectRefusedAgain(jar, weakByCode, shape, "password", /too common/);
      const ok = await send(jar, "/auth/reset-password", { csrfToken: await csrf(jar), code: codeIn(message!), password: CHOSEN }, shape);
      await expectLanding(ok, shape, `${ORIGIN}/account?updated=password-reset`);
      expect(ok).toHaveSessionCookie();
      const used = await send(other, "/auth/reset-password", { csrfToken: await csrf(other), ...byLink, password: "another fine phrase" }, shape);
      await expectLanding(used, shape, `${ORIGIN}/auth/error?error=Verification&link=reset`);
    });
  }
});

describe(`the verify-request page after a sign-up (${dbLabel})`, () => {
  /** The page as a browser gets it, CSRF tokens blanked. */
  async function pageAfterSignUp(email: string, type: string | null) {
    const jar = new CookieJar();
    const res = await send(jar, "/auth/signup", { csrfToken: await csrf(jar), email, password: CHOSEN, callbackUrl: "/account" });
    expect(res.status).toBe(302);
    const page = await send(jar, `/auth/verify-request?provider=email${type ? `&type=${type}` : ""}`);
    // Per-answer randomness blanked: CSRF tokens and the CSP nonce; the address the attacker typed
    // is named on the page (whichever it is), so it is blanked too.
    // The address shown is broken into parts by <wbr> (ADR 161): joined again before it is masked.
    const html = (await page.text()).replace(/[0-9a-f]{64}/g, "<token>").replace(/nonce="[^"]*"/g, "nonce").replaceAll("<wbr/>", "").replaceAll(email, "<address>");
    return { status: page.status, html, cookies: page.headers.getSetCookie().map((c) => c.slice(0, c.indexOf("="))).sort() };
  }

  for (const type of ["signup", "email", "reset", null]) {
    it(`an attacker who signs up an address learns nothing from the page with type=${type ?? "(none)"}: the same HTML for an address with an account and one without`, async () => {
      await createUser("owner@example.com");
      const known = await pageAfterSignUp("owner@example.com", type);
      const unknown = await pageAfterSignUp("nobody@example.com", type);
      expect(known.status).toBe(200);
      expect(known.status).toBe(unknown.status);
      expect(known.cookies).toEqual(unknown.cookies);
      expect(known.html).toBe(unknown.html);
    });
  }
});

describe(`a wrong code typed after a sign-up (${dbLabel})`, () => {
  /** The refused code's answer as the client gets it, per-answer randomness blanked. */
  async function wrongCodeAfterSignUp(email: string, shape: Shape) {
    const jar = new CookieJar();
    const res = await send(jar, "/auth/signup", { csrfToken: await csrf(jar), email, password: CHOSEN, callbackUrl: "/account" });
    expect(res.status).toBe(302);
    const code = codeIn(await messageTo(email));
    const answer = await send(jar, "/auth/callback/email", { csrfToken: await csrf(jar), code: otherCode(code) }, shape);
    const refused = shape === "form" ? await followRefusal(jar, answer) : answer;
    // The code form names the address typed (each attacker's own), the same way for both.
    // An address on the page is drawn with break points (<wbr/>, the Ltr component): read it whole.
    const text = (await refused.text()).replaceAll("<wbr/>", "").replaceAll(email, "<address>").replace(/[0-9a-f]{64}/g, "<token>").replace(/nonce="[^"]*"/g, "nonce");
    return { status: refused.status, text, cookies: refused.headers.getSetCookie().map((c) => c.slice(0, c.indexOf("="))).sort() };
  }

  for (const shape of SHAPES) {
    it(`${shape}: an attacker who signs up an address and types a wrong code cannot tell from the refusal whether it has an account`, async () => {
      await createUser("owner@example.com");
      const known = await wrongCodeAfterSignUp("owner@example.com", shape);
      const unknown = await wrongCodeAfterSignUp("nobody@example.com", shape);
      expect(known.status).toBe(shape === "form" ? 200 : 400);
      expect(known.status).toBe(unknown.status);
      expect(known.cookies).toEqual(unknown.cookies);
      expect(known.text).toBe(unknown.text);
    });
  }
});
