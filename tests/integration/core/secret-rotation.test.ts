// Issue 31 item 17, ADR 109: AUTH_SECRET is a comma list — the first value seals, every value
// opens. An operator rotating it puts the new value first and keeps the old one behind it for a
// while; every sealed cookie a browser sends that only the old value opens is answered, on that
// very request, with the same cookie sealed with the new value (same claims, same expiry: a
// session's absolute lifetime is not extended), so once the old value is dropped nobody is signed
// out. A cookie no value opens (forged, damaged, sealed with a dropped secret) is refused as
// before, and now counted (vestibule_cookies_refused_total by cookie and reason) and logged: one
// warn line per kind of cookie and reason a minute, never the value.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { decodeJwt } from "../../../app/auth/core/jwt.server.ts";
import { metricsResponse, resetMetrics } from "../../../app/auth/core/metrics.server.ts";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { mailSenderIdle, sendDueMail } from "../../../app/mail/queue.server.ts";
import { resetRefusedCookieLog } from "../../../app/auth/core/sealed-cookies.server.ts";
import { appHandler } from "../../support/app-handler.ts";
import { createUser, PASSWORD, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase } from "../../support/db.ts";
import { CookieJar, get, ORIGIN, post, setCookieHeaders } from "../../support/http.ts";
import { startSmtpSink, type SmtpSink } from "../../support/smtp-sink.ts";
import { codeAt, enrol, useStepClock } from "../two-factor/helpers.ts";

const OLD = "the-old-secret-of-this-deployment-0123456789";
const NEW = "the-new-secret-of-this-deployment-9876543210";
const TOKEN = "metrics-token-for-secret-rotation-0123456789";
const SESSION = "authjs.session-token";
const DEVICE = "authjs.device";
const PENDING = "authjs.two-factor";

const EMAIL_CODE = "authjs.email-code";

let handle: (request: Request) => Promise<Response>;
let smtp: SmtpSink;
beforeAll(async () => {
  handle = await appHandler();
  smtp = await startSmtpSink();
});
afterAll(() => smtp?.close());

let undo: (() => void)[] = [];
beforeEach(async () => {
  await resetDatabase();
  resetMetrics();
  resetRefusedCookieLog();
});
afterEach(() => {
  for (const u of undo.reverse()) u();
  undo = [];
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Sets AUTH_SECRET (and the rest) for the remainder of the test. */
function secrets(value: string, extra: Record<string, string> = {}) {
  undo.push(withEnv({ AUTH_SECRET: value, METRICS_TOKEN: TOKEN, ...extra }));
}

async function send(request: Request, jar?: CookieJar): Promise<Response> {
  const res = await handle(request);
  jar?.apply(res);
  return res;
}

async function passwordSignIn(jar: CookieJar, password = PASSWORD) {
  const csrf = await send(get("/auth/csrf", { jar }), jar);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await send(post("/auth/callback/credentials", { csrfToken, email: "ada@example.com", password }, { jar }), jar);
  await res.body?.cancel();
  return res;
}

/** The value `response` sets for `name` (undefined: it sets none). */
function setValue(response: Response, name: string): string | undefined {
  const header = setCookieHeaders(response).find((h) => h.startsWith(`${name}=`));
  return header === undefined ? undefined : decodeURIComponent(header.slice(name.length + 1).split(";")[0]!);
}

/** Opens a sealed cookie with `only` as the one secret (throws when it does not open). */
const openWith = (only: string, name: string, token: string) => decodeJwt({ token, secrets: [only], salt: name, clockTolerance: 0 });

async function refused(): Promise<Record<string, number>> {
  const res = await metricsResponse(new Request(`${ORIGIN}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } }));
  const out: Record<string, number> = {};
  for (const line of (await res!.text()).split("\n")) {
    const m = /^vestibule_cookies_refused_total\{cookie="([\w-]+)",reason="([\w-]+)"\} (\d+)$/.exec(line);
    if (m) out[`${m[1]}/${m[2]}`] = Number(m[3]);
  }
  return out;
}

describe(`rotating AUTH_SECRET re-seals the cookies browsers send (${dbLabel})`, () => {
  it("jwt: a session cookie sealed with the old secret is answered with one sealed with the new — same claims, same expiry — and with only the new secret the browser is still signed in", async () => {
    secrets(OLD, { AUTH_SESSION_STRATEGY: "jwt" });
    await createUser();
    const jar = new CookieJar();
    await passwordSignIn(jar);
    const before = await openWith(OLD, SESSION, decodeURIComponent(jar.get(SESSION)!));

    secrets(`${NEW},${OLD}`);
    const session = await send(get("/auth/session", { jar }), jar);
    expect(((await session.json()) as { user?: { email?: string } }).user?.email).toBe("ada@example.com");
    const resealed = setValue(session, SESSION);
    expect(resealed).toBeDefined();
    const after = await openWith(NEW, SESSION, resealed!);
    // The same cookie, not a new one: the expiry and the sign-in it counts from stay.
    expect(after).toEqual(before);
    const header = setCookieHeaders(session).find((h) => h.startsWith(`${SESSION}=`))!;
    expect(Date.parse(/Expires=([^;]+)/.exec(header)![1]!)).toBe(before.exp! * 1000);

    // The old secret goes: the re-sealed cookie still opens.
    secrets(NEW);
    const later = await send(get("/auth/session", { jar }), jar);
    expect(((await later.json()) as { user?: { email?: string } }).user?.email).toBe("ada@example.com");
    expect(setValue(later, SESSION)).toBeUndefined();
  });

  it("jwt: a session cookie already sealed with the first secret is not re-issued", async () => {
    secrets(`${NEW},${OLD}`, { AUTH_SESSION_STRATEGY: "jwt" });
    await createUser();
    const jar = new CookieJar();
    await passwordSignIn(jar);
    const session = await send(get("/auth/session", { jar }), jar);
    expect(setValue(session, SESSION)).toBeUndefined();
  });

  describe.each(["jwt", "database"] as const)("%s sessions", (strategy) => {
    it("the device cookie sealed with the old secret comes back sealed with the new on the next sign-in attempt, the same device, and still counts after the old secret is gone", async () => {
      secrets(OLD, { AUTH_SESSION_STRATEGY: strategy });
      await createUser();
      const jar = new CookieJar();
      await passwordSignIn(jar);
      const before = await openWith(OLD, DEVICE, decodeURIComponent(jar.get(DEVICE)!));

      secrets(`${NEW},${OLD}`);
      // A wrong password: nothing of the sign-in's own re-issues the device cookie.
      const attempt = await passwordSignIn(jar, "not the password at all 42");
      expect(attempt.headers.get("Location")).toContain("error=CredentialsSignin");
      const resealed = setValue(attempt, DEVICE);
      expect(resealed).toBeDefined();
      expect(await openWith(NEW, DEVICE, resealed!)).toEqual(before);

      secrets(NEW);
      const signedIn = await passwordSignIn(jar);
      expect(signedIn.headers.get("Location")).toBe(`${ORIGIN}/`);
      // The device was recognised: the cookie it re-issues keeps the device id.
      expect((await openWith(NEW, DEVICE, setValue(signedIn, DEVICE)!)).dev).toBe(before.dev);
    });

    it("a signed-in browser whose session and device cookies are sealed with the old secret makes one page request during the rotation: the device cookie comes back sealed with the new, and once the old is dropped its next sign-in is no new device (no new-device e-mail)", async () => {
      vi.useFakeTimers({ toFake: ["Date"], now: new Date() });
      const mail = { AUTH_EMAIL_SERVER: smtp.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>" };
      secrets(OLD, { AUTH_SESSION_STRATEGY: strategy, ...mail });
      await createUser();
      const jar = new CookieJar();
      await passwordSignIn(jar);
      const before = await openWith(OLD, DEVICE, decodeURIComponent(jar.get(DEVICE)!));

      secrets(`${NEW},${OLD}`, mail);
      // Seen during the rotation: a jwt session's cookie is found stale at once; a database
      // session's (a random token, nothing sealed) when it is next extended, a day on.
      const hours = strategy === "database" ? getConfig().sessionUpdateAge / 3600 + 1 : 2;
      vi.setSystemTime(new Date(Date.now() + hours * 3600_000));
      const page = await send(get("/account", { jar }), jar);
      expect(page.status).toBe(200);
      await page.body?.cancel();
      const resealed = setValue(page, DEVICE);
      expect(resealed).toBeDefined();
      expect(await openWith(NEW, DEVICE, resealed!)).toEqual(before);

      // The old value goes; two hours on (a new hour for the notices), the browser signs in again.
      secrets(NEW, mail);
      vi.setSystemTime(new Date(Date.now() + 2 * 3600_000));
      await mailSenderIdle();
      await sendDueMail();
      const sentBefore = smtp.messages.length;
      const signedIn = await passwordSignIn(jar);
      expect(signedIn.headers.get("Location")).toBe(`${ORIGIN}/`);
      expect((await openWith(NEW, DEVICE, setValue(signedIn, DEVICE)!)).dev).toBe(before.dev);
      await mailSenderIdle();
      await sendDueMail();
      expect(smtp.messages.slice(sentBefore).map((m) => m.subject)).not.toContain("New sign-in to your Vestibule account");
    });

    it("a pending second-factor sign-in sealed with the old secret is re-sealed by the second-factor page and still finishes with only the new secret", async () => {
      // The TOTP secret is sealed at rest with the first value (sealed-at-rest.server.ts, not a
      // cookie): enrolled under the new one, so that only the cookie is what the old one sealed.
      secrets(NEW, { AUTH_SESSION_STRATEGY: strategy });
      useStepClock();
      await createUser();
      const { secret } = await enrol();
      secrets(`${OLD},${NEW}`);
      const jar = new CookieJar();
      await passwordSignIn(jar);
      const before = await openWith(OLD, PENDING, decodeURIComponent(jar.get(PENDING)!));

      secrets(`${NEW},${OLD}`);
      const page = await send(get("/auth/two-factor", { jar }), jar);
      expect(page.status).toBe(200);
      await page.body?.cancel();
      const resealed = setValue(page, PENDING);
      expect(resealed).toBeDefined();
      expect(await openWith(NEW, PENDING, resealed!)).toEqual(before);

      secrets(NEW);
      const csrf = await send(get("/auth/csrf", { jar }), jar);
      const { csrfToken } = (await csrf.json()) as { csrfToken: string };
      const finished = await send(post("/auth/two-factor", { csrfToken, code: codeAt(secret) }, { jar }), jar);
      expect(finished.headers.get("Location")).toBe(`${ORIGIN}/`);
      expect(setValue(finished, SESSION)).toBeDefined();
    });
  });

  it("the e-mail code cookie sealed with the old secret is re-sealed with the new by the page that reads it, naming the same request", async () => {
    secrets(OLD, { AUTH_EMAIL_SERVER: smtp.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>" });
    const jar = new CookieJar();
    const csrf = await send(get("/auth/csrf", { jar }), jar);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const asked = await send(post("/auth/signin/email", { csrfToken, email: "sam@example.com" }, { jar }), jar);
    expect(asked.headers.get("Location")).toContain("/auth/verify-request");
    const before = await openWith(OLD, EMAIL_CODE, decodeURIComponent(jar.get(EMAIL_CODE)!));

    secrets(`${NEW},${OLD}`);
    const page = await send(get("/auth/verify-request?provider=email&type=email", { jar }), jar);
    expect(page.status).toBe(200);
    await page.body?.cancel();
    const resealed = setValue(page, EMAIL_CODE);
    expect(resealed).toBeDefined();
    expect(await openWith(NEW, EMAIL_CODE, resealed!)).toEqual(before);
  });

  it("a visitor sending one garbage session cookie on one page request is counted once, however many times the request reads it", async () => {
    secrets(NEW, { AUTH_SESSION_STRATEGY: "jwt" });
    vi.spyOn(console, "log").mockImplementation(() => {});
    let n = 0;
    for (const path of ["/", "/welcome", "/account", "/_root.data", "/auth/session"]) {
      const res = await send(get(path, { jar: new CookieJar({ [SESSION]: "not-a-sealed-cookie-at-all" }) }));
      await res.body?.cancel();
      expect(await refused(), path).toEqual({ "session/malformed": ++n });
    }
  });

  it("garbage and cookies sealed with a dropped secret are refused as before, counted by cookie and reason, and logged once a minute without their value", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: new Date() });
    secrets(OLD, { AUTH_SESSION_STRATEGY: "jwt" });
    await createUser();
    const signedIn = new CookieJar();
    await passwordSignIn(signedIn);
    secrets(NEW);
    const logged = vi.spyOn(console, "log").mockImplementation(() => {});

    const garbage = "not-a-sealed-cookie-at-all";
    for (let i = 0; i < 3; i++) {
      const res = await send(get("/auth/session", { jar: new CookieJar({ [SESSION]: garbage }) }));
      expect(await res.json()).toBeNull();
    }
    // Sealed with the old secret, which is gone: no key opens it.
    const res = await send(get("/auth/session", { jar: signedIn }));
    expect(await res.json()).toBeNull();

    expect(await refused()).toEqual({ "session/malformed": 3, "session/no-key": 1 });
    const lines = logged.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"cookie-refused"'));
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", event: "cookie-refused", kind: "session", reason: "malformed" });
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: "warn", event: "cookie-refused", kind: "session", reason: "no-key" });
    for (const line of lines) {
      expect(line).not.toContain(garbage);
      expect(line).not.toContain(signedIn.get(SESSION)!.slice(0, 40));
    }

    // A minute on, the next one is logged again, saying how many went unlogged meanwhile.
    vi.setSystemTime(new Date(Date.now() + 61_000));
    await (await send(get("/auth/session", { jar: new CookieJar({ [SESSION]: garbage }) }))).body?.cancel();
    const later = logged.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"cookie-refused"'));
    expect(later).toHaveLength(3);
    expect(JSON.parse(later[2]!)).toMatchObject({ kind: "session", reason: "malformed", notLoggedSince: 2 });
    expect(await refused()).toEqual({ "session/malformed": 4, "session/no-key": 1 });
  });
});
