// Session control (ADR 036): /account lists the sessions of both strategies
// and ends one, all others, or all; ended jwt sessions are refused through each process's
// in-memory revocation list, refreshed from the database (refreshRevocations drives the poll here).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { encodeJwt } from "../../../app/auth/core/jwt.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { refreshRevocations, resetRevocations, REVOCATION_POLL_MS } from "../../../app/auth/core/revocation.server.ts";
import { getSession } from "../../../app/auth/core/session.server.ts";
import * as account from "../../../app/routes/account.tsx";
import * as accountEmail from "../../../app/routes/account-email.tsx";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as signinRoute from "../../../app/routes/auth/signin";
import { createUser, PASSWORD, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http.ts";
import { linkIn, waitForMessages } from "../../support/smtp-sink.ts";
import { useSmtpSink } from "../email/helpers.ts";

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36";

const smtp = useSmtpSink();

type Listed = { id: string; current: boolean; userAgent: string | null; method: string | null; createdAt: string; lastUsedAt: string };

async function signInAs(email: string, userAgent: string) {
  const jar = new CookieJar();
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/credentials", { csrfToken, email, password: PASSWORD }, { jar, headers: { "User-Agent": userAgent } }),
    { provider: "credentials" },
  );
  expect(res.status).toBe(302);
  jar.apply(res);
  return jar;
}

async function sessionUser(jar: CookieJar) {
  const res = await callRoute(sessionRoute.loader, get("/auth/session", { jar }));
  jar.apply(res);
  return ((await res.json()) as { user: { email: string } } | null)?.user ?? null;
}

async function accountPage(jar: CookieJar) {
  const res = await callRoute(account.loader, get("/account", { jar }));
  expect(res.status).toBe(200);
  jar.apply(res);
  return (await res.json()) as { csrfToken: string; sessions: Listed[]; events: { type: string; userAgent: string | null; ip: string | null; method: string | null }[] };
}

async function intent(jar: CookieJar, fields: Record<string, string>) {
  const { csrfToken } = await accountPage(jar);
  const res = await callRoute(account.action, post("/account", { csrfToken, ...fields }, { jar }));
  jar.apply(res);
  return res;
}

let undoEnv: (() => void) | null = null;
beforeEach(async () => {
  await resetDatabase();
  resetRevocations();
});
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  resetRevocations();
  vi.restoreAllMocks();
});

describe.each(["jwt", "database"] as const)(`session control, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy });
  });

  it("lists every session with its device, method, times and this device", async () => {
    await createUser();
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const phone = await signInAs("ada@example.com", CHROME);
    const { sessions } = await accountPage(laptop);
    expect(sessions).toHaveLength(2);
    const mine = sessions.find((s) => s.current)!;
    expect(mine).toMatchObject({ userAgent: FIREFOX, method: "Credentials" });
    expect(sessions.find((s) => !s.current)).toMatchObject({ userAgent: CHROME, method: "Credentials" });
    expect(Date.parse(mine.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    expect((await accountPage(phone)).sessions.find((s) => s.current)?.userAgent).toBe(CHROME);
    const rows = await testDb().session.findMany();
    expect(rows.map((r) => [r.kind, r.method])).toEqual([
      [strategy, "credentials"],
      [strategy, "credentials"],
    ]);
    if (strategy === "jwt") expect(rows.every((r) => r.tokenHash === null)).toBe(true);
  });

  it("revoke-session ends that session only; another user's session cannot be ended", async () => {
    await createUser();
    await createUser("grace@example.com", "Grace");
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const phone = await signInAs("ada@example.com", CHROME);
    const grace = await signInAs("grace@example.com", CHROME);
    const phoneId = (await accountPage(laptop)).sessions.find((s) => !s.current)!.id;
    const graceId = (await accountPage(grace)).sessions[0]!.id;

    const foreign = await intent(laptop, { intent: "revoke-session", sessionId: graceId });
    expect(foreign.status).toBe(404);
    await refreshRevocations();
    expect((await sessionUser(grace))?.email).toBe("grace@example.com");

    expect(await intent(laptop, { intent: "revoke-session", sessionId: phoneId })).toHaveRedirect("/account?updated=session#devices-notice");
    await refreshRevocations();
    expect(await sessionUser(phone)).toBeNull();
    expect((await sessionUser(laptop))?.email).toBe("ada@example.com");
    expect((await accountPage(laptop)).sessions.map((s) => s.id)).not.toContain(phoneId);
    expect((await sessionUser(grace))?.email).toBe("grace@example.com");
  });

  it("revoke-others keeps this session; revoke-all ends this one too", async () => {
    await createUser();
    await createUser("grace@example.com", "Grace");
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const phone = await signInAs("ada@example.com", CHROME);
    const tablet = await signInAs("ada@example.com", CHROME);
    const grace = await signInAs("grace@example.com", CHROME);

    expect(await intent(laptop, { intent: "revoke-others" })).toHaveRedirect("/account?updated=others#devices-notice");
    await refreshRevocations();
    expect(await sessionUser(phone)).toBeNull();
    expect(await sessionUser(tablet)).toBeNull();
    expect((await sessionUser(laptop))?.email).toBe("ada@example.com");
    expect((await accountPage(laptop)).sessions).toHaveLength(1);

    const again = await signInAs("ada@example.com", CHROME);
    expect(await intent(laptop, { intent: "revoke-all" })).toHaveRedirect("/auth/signin?notice=SignedOutEverywhere");
    await refreshRevocations();
    expect(await sessionUser(laptop)).toBeNull();
    expect(await sessionUser(again)).toBeNull();
    expect((await sessionUser(grace))?.email).toBe("grace@example.com");
    expect(await testDb().authEvent.count({ where: { type: "session-revoked" } })).toBe(2);
  });

  it("a visitor who signs out everywhere lands on the sign-in page told every device was signed out", async () => {
    await createUser();
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const res = await intent(laptop, { intent: "revoke-all" });
    expect(res).toHaveRedirect("/auth/signin?notice=SignedOutEverywhere");
    const page = await (await callRoute(signinRoute.loader, get("/auth/signin?notice=SignedOutEverywhere", { jar: laptop }))).json();
    expect(page.notice).toBe("You were signed out on every device.");
    expect(page.signedInAs).toBeNull();
  });

  it("revoke-others keeps this browser signed in when its session was issued before this second", async () => {
    // Every real session is older than the click that ends the others: the cut-off written for
    // them (notBefore = now) must not refuse the very cookie it keeps.
    await createUser();
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const phone = await signInAs("ada@example.com", CHROME);
    await new Promise((r) => setTimeout(r, 1_100));
    const res = await intent(laptop, { intent: "revoke-others" });
    expect(res).toHaveRedirect("/account?updated=others#devices-notice");
    // No cookie of this browser is cleared: a jwt cookie is issued again, a database one kept.
    expect(res.headers.getSetCookie().filter((c) => c.startsWith("authjs.session-token") && /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c))).toEqual([]);
    await refreshRevocations();
    expect(await sessionUser(phone)).toBeNull();
    expect((await sessionUser(laptop))?.email).toBe("ada@example.com");
    expect((await accountPage(laptop)).sessions).toHaveLength(1);
  });

  it("an e-mail change ends the user's other sessions and keeps the confirming one", async () => {
    undoEnv?.();
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_EMAIL_SERVER: smtp.sink.url, AUTH_EMAIL_FROM: "Vestibule <no-reply@example.com>" });
    await createUser();
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const phone = await signInAs("ada@example.com", CHROME);
    expect((await intent(laptop, { intent: "change-email", email: "ada@new.example" })).status).toBe(200);
    const link = linkIn((await waitForMessages(smtp.sink, 1))[0]!);
    const opened = await callRoute(accountEmail.loader, get(link.pathname + link.search, { jar: laptop }));
    laptop.apply(opened);
    const page = (await opened.json()) as { token: string; csrfToken: string; address: string };
    const confirmed = await callRoute(accountEmail.action, post("/account/email", { csrfToken: page.csrfToken, token: page.token, email: page.address }, { jar: laptop }));
    laptop.apply(confirmed);
    expect(confirmed).toHaveRedirect("/account?updated=email");
    await refreshRevocations();
    expect(await sessionUser(phone)).toBeNull();
    expect((await sessionUser(laptop))?.email).toBe("ada@new.example");
  });

  it("AUTH_SESSION_ABSOLUTE_MAX_AGE refuses a session older than that from its sign-in, rolled or not", async () => {
    await createUser();
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const day = 24 * 3600 * 1000;
    // A roll after a day and a half keeps the sign-in time.
    const rolled = await getSession(authRequest(get("/auth/session", { jar: laptop })), { now: new Date(Date.now() + 1.5 * day) });
    expect(rolled.setCookies.length).toBeGreaterThan(0);
    laptop.apply(rolled.setCookies);
    const at = (days: number) => getSession(authRequest(get("/auth/session", { jar: laptop })), { roll: false, now: new Date(Date.now() + days * day) });
    expect((await at(3)).session?.userId).toBeDefined();
    undoEnv?.();
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: strategy, AUTH_SESSION_ABSOLUTE_MAX_AGE: String(2 * 24 * 3600) });
    expect((await at(1.9)).session).not.toBeNull();
    expect((await at(2.1)).session).toBeNull();
  });
});

describe(`the revocation list across processes (${dbLabel})`, () => {
  /** What another instance's revoke-session writes: the jwt session's row marked revoked. */
  async function revokedElsewhere(sid: string) {
    await testDb().session.update({ where: { id: sid }, data: { revokedAt: new Date() } });
  }

  it("a jwt session ended on another instance is refused here after the next poll, with no database read per request", async () => {
    await createUser();
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const phone = await signInAs("ada@example.com", CHROME);
    const phoneId = (await accountPage(phone)).sessions.find((s) => s.current)!.id;
    await refreshRevocations();
    await revokedElsewhere(phoneId);
    // Not yet polled: this process does not know, because a read never asks the database.
    const queries = vi.spyOn(testDb().session, "findUnique");
    expect((await sessionUser(phone))?.email).toBe("ada@example.com");
    await refreshRevocations();
    expect(await sessionUser(phone)).toBeNull();
    expect((await sessionUser(laptop))?.email).toBe("ada@example.com");
    expect(queries).not.toHaveBeenCalled();
  });

  it("a profile update does not outlive a revocation: the revoked cookie stays refused after the revocation's row expires", async () => {
    // The cookie that a profile update re-issues carries a new expiry; the session's row (what
    // /account lists, what a revocation is kept in memory for) must carry the same one.
    const day = 24 * 3600 * 1000;
    const t0 = Date.parse("2026-11-25T12:00:00Z");
    vi.useFakeTimers({ toFake: ["Date"], now: t0 });
    try {
      await createUser();
      const thief = await signInAs("ada@example.com", CHROME);
      const thiefId = (await accountPage(thief)).sessions.find((s) => s.current)!.id;
      // Whoever holds the cookie renames the profile now and then (or calls next-auth's update()).
      vi.setSystemTime(t0 + 0.5 * day);
      expect(await intent(thief, { intent: "update-profile", name: "Ada L." })).toHaveRedirect("/account?updated=profile#profile-notice");
      // The thief keeps this cookie whatever a later answer says to do with it.
      const stolenCookie = thief.get("authjs.session-token")!;
      const stolen = () => new CookieJar({ "authjs.session-token": stolenCookie });
      // The owner signs in and ends that session (ending another session needs a recent sign-in: ADR 058).
      vi.setSystemTime(t0 + 0.6 * day);
      const owner = await signInAs("ada@example.com", FIREFOX);
      expect(await intent(owner, { intent: "revoke-session", sessionId: thiefId })).toHaveRedirect("/account?updated=session#devices-notice");
      await refreshRevocations();
      expect(await sessionUser(stolen())).toBeNull();
      // Past the row's first expiry, within the cookie's: a process that starts now, and one that
      // has been running all along, both still refuse it.
      vi.setSystemTime(t0 + 30.2 * day);
      await refreshRevocations();
      expect(await sessionUser(stolen())).toBeNull();
      resetRevocations();
      expect(await sessionUser(stolen())).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it.each(["rolled", "renamed"] as const)("a cookie without a sid, %s here before the poll, does not outlive a sign-out everywhere made elsewhere", async (how) => {
    // Cookies minted before sids existed (or by Auth.js before the switch) are ended only by the
    // user's cut-off. A roll or a profile update re-issues them with a fresh issue time, past any
    // cut-off: done here in the seconds before this process polls, it would keep them for good.
    const user = await createUser();
    const config = getConfig();
    const legacy = await encodeJwt({
      payload: { name: "Ada", email: "ada@example.com", picture: null, sub: user.id },
      secrets: config.secrets,
      salt: "authjs.session-token",
      maxAge: config.sessionMaxAge,
      now: new Date(Date.now() - 2 * 24 * 3600 * 1000),
    });
    await refreshRevocations();
    // "Sign out everywhere" on another instance: the user's cut-off, written there.
    const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000);
    await testDb().sessionCutoff.create({ data: { userId: user.id, notBefore, expires: new Date(notBefore.getTime() + 30 * 24 * 3600 * 1000) } });

    const jar = new CookieJar({ "authjs.session-token": legacy });
    if (how === "rolled") {
      // Two days old: the session read re-issues it.
      await sessionUser(jar);
    } else {
      // next-auth's update(): the profile update re-issues it.
      const csrfToken = await fetchCsrf(jar);
      jar.apply(await callRoute(sessionRoute.action, post("/auth/session", { csrfToken, data: { name: "Ada L." } }, { jar, json: true })));
    }
    await refreshRevocations();
    expect(await sessionUser(jar)).toBeNull();
  });

  it("with the real timer, within 5 seconds", async () => {
    await createUser();
    const phone = await signInAs("ada@example.com", CHROME);
    expect((await sessionUser(phone))?.email).toBe("ada@example.com"); // starts this process's poll
    const phoneId = (await testDb().session.findFirstOrThrow()).id;
    const started = Date.now();
    await revokedElsewhere(phoneId);
    while ((await sessionUser(phone)) !== null) {
      expect(Date.now() - started).toBeLessThan(5_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    const delay = Date.now() - started;
    expect(delay).toBeLessThanOrEqual(REVOCATION_POLL_MS + 1_000);
    console.log(`revocation seen after ${delay} ms (${dbLabel})`);
  }, 10_000);

  it("when the database is unreachable the last list stays in force, logged once per outage", async () => {
    await createUser();
    const laptop = await signInAs("ada@example.com", FIREFOX);
    const phone = await signInAs("ada@example.com", CHROME);
    const phoneId = (await accountPage(phone)).sessions.find((s) => s.current)!.id;
    await revokedElsewhere(phoneId);
    expect(await refreshRevocations()).toBe(true);

    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const logged = vi.spyOn(console, "log").mockImplementation(() => {});
    // A dead database: PostgreSQL on a closed port; SQLite in a folder that cannot exist (a file's child).
    undoEnv = withEnv(dbLabel === "postgres" ? { DATABASE_URL: "postgresql://postgres@127.0.0.1:1/gone" } : { VESTIBULE_DATA_DIR: "/dev/null/gone" });
    expect(await refreshRevocations()).toBe(false);
    expect(await refreshRevocations()).toBe(false);
    expect(await sessionUser(phone)).toBeNull();
    expect((await sessionUser(laptop))?.email).toBe("ada@example.com");
    // Every level goes to stdout.
    const stale = logged.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"session-revocations-stale"'));
    expect(stale).toHaveLength(1);

    undoEnv();
    undoEnv = null;
    expect(await refreshRevocations()).toBe(true);
    expect(logged.mock.calls.map((c) => String(c[0])).some((l) => l.includes('"session-revocations-restored"'))).toBe(true);
    expect(await sessionUser(phone)).toBeNull();
  });
});

describe(`a session that ended while /account was open, JavaScript on (${dbLabel})`, () => {
  // With JavaScript the page's forms and reloads are data requests (/account.data): they get
  // `401 {"error":"SessionRequired","url"}` (the page shows a sign-in link, ADR 118). The sign-in
  // page must bring the user back to the page, not to its data, which a browser shows as raw text.
  it.each([
    ["a form", () => callRoute(account.action, post("/account.data", { intent: "revoke-others" }))],
    ["a reload", () => callRoute(account.loader, get("/account.data?_routes=routes%2Faccount"))],
    ["an index form", () => callRoute(account.action, post("/account.data?index&_routes=routes%2Faccount", { intent: "revoke-others" }))],
    ["a plain form", () => callRoute(account.action, post("/account?x=1", { intent: "revoke-others" }))],
  ])("%s sends the visitor to sign in and back to the page", async (what, send) => {
    const res = await send();
    if (what === "a plain form") {
      expect(res).toHaveRedirect("/auth/signin?error=SessionRequired&callbackUrl=%2Faccount%3Fx%3D1");
      return;
    }
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "SessionRequired", url: `${ORIGIN}/auth/signin?error=SessionRequired&callbackUrl=%2Faccount` });
  });
});
