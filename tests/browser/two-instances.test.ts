// Two production servers behind one deployment: the same PostgreSQL
// database, AUTH_SECRET and AUTH_URL, spoken to over plain HTTP with a cookie jar. A session made
// on one is valid on the other, a session ended on one is refused by the other within 5 seconds
// (measured), and the credentials limits count the attempts made on both. An e-mail link asked
// for on one completes on the other, an OAuth flow started on one finishes on the other (real SMTP
// sink and test IdP), and one link clicked 20 times at once across both gives exactly one session.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oauthSignIn, requestEmailLink, sessionEmail, call as visit } from "../support/app-client";
import { startApp, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { CookieJar } from "../support/http";
import { postgresUnreachable } from "../support/postgres-required";
import { ALICE, startTestIdp, TEST_CLIENT, type TestIdp } from "../support/idp";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import { ADMIN_URL, databaseUrl, runDatabasePrefix } from "../support/postgres";

/** The bound gives another instance to refuse an ended session. */
const REVOCATION_BOUND_MS = 5_000;
const POLL_EVERY_MS = 100;

// PostgreSQL is required in CI; on a developer's machine without it the file is skipped with a reason.
const unreachable = await postgresUnreachable("two-instance tests");

async function call(
  app: RunningApp,
  jar: CookieJar,
  path: string,
  init: { method?: string; body?: Record<string, string> } = {},
) {
  const res = await fetch(app.url + path, {
    method: init.method ?? "GET",
    redirect: "manual",
    headers: {
      Cookie: jar.header(),
      ...(init.body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
    },
    body: init.body ? new URLSearchParams(init.body) : undefined,
  });
  jar.apply(res);
  return res;
}

async function csrfToken(app: RunningApp, jar: CookieJar): Promise<string> {
  return ((await (await call(app, jar, "/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
}

/** A credentials sign-in: the answer (a redirect) and the jar, holding the session cookie on success. */
async function signIn(app: RunningApp, email: string, password: string, jar = new CookieJar()) {
  const token = await csrfToken(app, jar);
  const res = await call(app, jar, "/auth/callback/credentials", {
    method: "POST",
    body: { csrfToken: token, email, password, callbackUrl: `${app.url}/account` },
  });
  await res.body?.cancel();
  return { res, jar, csrfToken: token };
}

/** GET /auth/session with the jar's cookies as they are now (answers' cookies are not kept). */
async function sessionUser(app: RunningApp, jar: CookieJar): Promise<{ email: string } | null> {
  const res = await fetch(`${app.url}/auth/session`, { headers: { Cookie: jar.header() } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { user: { email: string } } | null;
  return body ? body.user : null;
}

/** Polls `app` until it refuses the jar's session; milliseconds from `since` to the first refusal. */
async function refusalDelay(app: RunningApp, jar: CookieJar, since: number): Promise<number> {
  const deadline = since + REVOCATION_BOUND_MS * 2;
  while (Date.now() < deadline) {
    if ((await sessionUser(app, jar)) === null) return Date.now() - since;
    await new Promise((r) => setTimeout(r, POLL_EVERY_MS));
  }
  throw new Error(`${app.url} still accepted the ended session ${REVOCATION_BOUND_MS * 2} ms after it was ended`);
}

function expectNoStackTrace(app: RunningApp) {
  expect(app.logs()).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
}

describe.skipIf(unreachable !== null).each(["jwt", "database"] as const)("two instances sharing one PostgreSQL database (%s sessions)", (strategy) => {
  const database = `${runDatabasePrefix()}two_instances_${strategy}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  let direct: pg.Client;
  let a: RunningApp;
  let b: RunningApp;
  let sink: SmtpSink;
  let idp: TestIdp;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${database}"`);
    [sink, idp] = await Promise.all([startSmtpSink(), startTestIdp()]);
    const shared = {
      DATABASE_URL: databaseUrl(ADMIN_URL, database),
      AUTH_SESSION_STRATEGY: strategy,
      AUTH_EMAIL_SERVER: sink.url,
      AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>",
      AUTH_OIDC_ISSUER: idp.issuer,
      AUTH_OIDC_ID: TEST_CLIENT.clientId,
      AUTH_OIDC_SECRET: TEST_CLIENT.clientSecret,
    };
    // A first: it applies the migrations; B finds them applied. Both answer as A's URL, the
    // deployment's one public address (AUTH_URL), and share startApp's AUTH_SECRET.
    a = await startApp(shared);
    b = await startApp({ ...shared, AUTH_URL: a.env.AUTH_URL!, AUTH_SECRET: a.env.AUTH_SECRET! });
    direct = new pg.Client({ connectionString: databaseUrl(ADMIN_URL, database) });
    await direct.connect();
  });

  afterAll(async () => {
    await direct?.end();
    await a?.stop();
    await b?.stop();
    await sink?.close();
    await idp?.stop();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  });

  it("share the configuration that makes them one deployment", () => {
    expect(b.env.DATABASE_URL).toBe(a.env.DATABASE_URL);
    expect(b.env.AUTH_SECRET).toBe(a.env.AUTH_SECRET);
    expect(b.env.AUTH_URL).toBe(a.env.AUTH_URL);
    expect(b.url).not.toBe(a.url);
  });

  it("a session made on A is valid on B; one ended on A is refused by B within 5 s", async () => {
    const email = `ended-${strategy}@example.com`;
    const password = "two-instances-password-1";
    await seedUser(a, { email, password, name: "Two Instances" });

    // The session to end, made on A and read on B.
    const ended = await signIn(a, email, password);
    expect(ended.res.status).toBe(302);
    expect(ended.res.headers.get("Location")).toBe(`${a.url}/account`);
    expect(await sessionUser(b, ended.jar)).toMatchObject({ email });
    expect(await sessionUser(a, ended.jar)).toMatchObject({ email });

    // Its id, as /account lists it: the user's only session so far.
    const rows = await direct.query<{ id: string; kind: string }>(
      `SELECT s.id, s.kind FROM "Session" s JOIN "User" u ON u.id = s."userId" WHERE u.email = $1`,
      [email],
    );
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.kind).toBe(strategy);
    const endedId = rows.rows[0]!.id;

    // Another device of the same user, on A, ends it from /account.
    const actor = await signIn(a, email, password);
    expect(actor.res.status).toBe(302);
    const revoke = await call(a, actor.jar, "/account", {
      method: "POST",
      body: { csrfToken: actor.csrfToken, intent: "revoke-session", sessionId: endedId },
    });
    const answeredAt = Date.now();
    await revoke.body?.cancel();
    expect(revoke.status).toBe(302);
    expect(revoke.headers.get("Location")).toBe("/account?updated=session#devices-notice");

    // A refuses it at once; B within the bound.
    expect(await sessionUser(a, ended.jar)).toBeNull();
    const delay = await refusalDelay(b, ended.jar, answeredAt);
    console.log(`revocation delay across instances: ${delay} ms (${strategy}, revoke-session)`);
    expect(delay).toBeLessThan(REVOCATION_BOUND_MS);

    // The device that ended it is still signed in on both.
    expect(await sessionUser(a, actor.jar)).toMatchObject({ email });
    expect(await sessionUser(b, actor.jar)).toMatchObject({ email });

    // "Sign out everywhere" on B: A refuses every session of the user, the caller's included.
    const other = await signIn(b, email, password);
    expect(await sessionUser(a, other.jar)).toMatchObject({ email });
    // The caller's cookie as it was: B's answer deletes it from the jar.
    const before = new CookieJar(Object.fromEntries(actor.jar.names().map((n) => [n, actor.jar.get(n)!])));
    const revokeAll = await call(b, actor.jar, "/account", {
      method: "POST",
      body: { csrfToken: actor.csrfToken, intent: "revoke-all" },
    });
    const allAnsweredAt = Date.now();
    await revokeAll.body?.cancel();
    expect(revokeAll.status).toBe(302);
    expect(await sessionUser(b, before)).toBeNull();
    const allDelay = Math.max(await refusalDelay(a, other.jar, allAnsweredAt), await refusalDelay(a, before, allAnsweredAt));
    console.log(`revocation delay across instances: ${allDelay} ms (${strategy}, revoke-all)`);
    expect(allDelay).toBeLessThan(REVOCATION_BOUND_MS);

    expectNoStackTrace(a);
    expectNoStackTrace(b);
  });

  it("failed credentials attempts on A and B add up: the 6th for one (account, client) is refused on either, even with the right password", async () => {
    const email = `limited-${strategy}@example.com`;
    const password = "two-instances-password-2";
    await seedUser(a, { email, password });

    // Five failures alternated between the instances, each from a new client with no device
    // cookie: only the per-(account, client) budget of 5 in 15 minutes can refuse them.
    for (let attempt = 0; attempt < 5; attempt++) {
      const app = attempt % 2 === 0 ? a : b;
      const { res } = await signIn(app, email, `wrong-password-${attempt}`);
      expect(res.status, `attempt ${attempt + 1} on ${app === a ? "A" : "B"}`).toBe(302);
      const location = res.headers.get("Location") ?? "";
      expect(location).toContain("error=CredentialsSignin");
      expect(location).not.toContain("RateLimited");
    }

    // The sixth, with the right password, on either instance.
    for (const app of [b, a]) {
      const { res, jar } = await signIn(app, email, password);
      expect(res.status).toBe(302);
      expect(res.headers.get("Location")).toContain("error=RateLimited");
      expect(jar.get("authjs.session-token")).toBeUndefined();
      expect(await sessionUser(app, jar)).toBeNull();
    }

    expectNoStackTrace(a);
    expectNoStackTrace(b);
  });

  it("an e-mail link asked for on A completes on B; the session is valid on both", async () => {
    const email = `link-across-${strategy}@example.com`;
    const { link, jar } = await requestEmailLink(a, sink, email, sink.messages.length + 1);
    expect(link.origin).toBe(a.url);
    const opened = await visit(b, jar, link.pathname + link.search);
    await opened.body?.cancel();
    expect(opened.status).toBe(302);
    expect(opened.headers.get("Location")).not.toContain("error=");
    expect(await sessionEmail(b, jar)).toBe(email);
    expect(await sessionEmail(a, jar)).toBe(email);
    expectNoStackTrace(a);
    expectNoStackTrace(b);
  });

  it("an OAuth flow started on A (state and PKCE cookies) finishes on B", async () => {
    const { jar, res } = await oauthSignIn(a, ALICE, b);
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).not.toContain("error=");
    expect(await sessionEmail(b, jar)).toBe(ALICE.email);
    expect(await sessionEmail(a, jar)).toBe(ALICE.email);
    expectNoStackTrace(a);
    expectNoStackTrace(b);
  });

  it("one link clicked 20 times at once, split across A and B, gives exactly one session", async () => {
    const email = `clicked-twenty-${strategy}@example.com`;
    const { link } = await requestEmailLink(a, sink, email, sink.messages.length + 1);
    const clicks = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const jar = new CookieJar();
        const res = await visit(i % 2 === 0 ? a : b, jar, link.pathname + link.search);
        await res.body?.cancel();
        return { location: res.headers.get("Location") ?? "", status: res.status, jar };
      }),
    );
    for (const click of clicks) expect(click.status).toBe(302);
    const signedIn = clicks.filter((c) => !c.location.includes("error="));
    expect(signedIn).toHaveLength(1);
    expect(clicks.filter((c) => c.location.includes("error=Verification"))).toHaveLength(19);
    const sessions = await direct.query(`SELECT s.id FROM "Session" s JOIN "User" u ON u.id = s."userId" WHERE u.email = $1`, [email]);
    expect(sessions.rows).toHaveLength(1);
    expect(await sessionEmail(b, signedIn[0]!.jar)).toBe(email);
    expectNoStackTrace(a);
    expectNoStackTrace(b);
  });
});
