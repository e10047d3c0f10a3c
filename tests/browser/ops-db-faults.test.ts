// The database cut or stalled under running production servers (docs/decisions/052),
// through a TCP relay the test controls: jwt GET /auth/session keeps answering from the cookie;
// what needs the database ends on /auth/error?error=ServiceUnavailable — a 503 page in the
// visitor's language with Retry-After — or 503 ServiceUnavailable (JSON) within DATABASE_TIMEOUT_MS,
// never with a stack trace; /readyz says unavailable; nothing is half-written; the outage is
// logged once when it begins and once when it ends (docs/decisions/106); and when the relay is
// restored the same processes serve again with no restart.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../app/auth/core/config.server";
import { call, credentialsSignIn, csrfToken, requestEmailLink, sessionEmail } from "../support/app-client";
import { addUser, freePort, startApp, type RunningApp } from "../support/browser";
import { DatabaseRelay } from "../support/db-relay";
import { CookieJar } from "../support/http";
import { postgresUnreachable } from "../support/postgres-required";
import { ADMIN_URL, databaseUrl, runDatabasePrefix } from "../support/postgres";
import { isSecurityNotice, startSmtpSink, type SmtpSink } from "../support/smtp-sink";
import { waitUntil } from "../support/wait";

const TIMEOUT_MS = 1_000;
/** What an answer may take beyond the timeout: the request's own work and a loaded machine. */
const SLACK_MS = 1_500;

const unreachable = await postgresUnreachable("database fault tests");

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
}

function expectNoStackTrace(app: RunningApp) {
  expect(app.logs()).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
  expect(app.logs()).not.toContain("    at ");
}

describe.skipIf(unreachable !== null)("the database cut or stalled under running servers", () => {
  const database = `${runDatabasePrefix()}ops_db_faults`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  let direct: pg.Client;
  let relay: DatabaseRelay;
  let sink: SmtpSink;
  let jwtApp: RunningApp;
  let dbApp: RunningApp;
  const email = "faults-owner@example.com";
  const password = "faults-owner-password-1";
  let jwtJar: CookieJar;
  let dbJar: CookieJar;
  let mails = 0;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${database}"`);
    relay = new DatabaseRelay(await freePort());
    await relay.open();
    sink = await startSmtpSink();
    const env = {
      DATABASE_URL: relay.via(databaseUrl(ADMIN_URL, database)),
      DATABASE_TIMEOUT_MS: String(TIMEOUT_MS),
      AUTH_EMAIL_SERVER: sink.url,
      AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>",
    };
    jwtApp = await startApp({ ...env, AUTH_SESSION_STRATEGY: "jwt" });
    dbApp = await startApp({ ...env, AUTH_SESSION_STRATEGY: "database" });
    direct = new pg.Client({ connectionString: databaseUrl(ADMIN_URL, database) });
    await direct.connect();
    // Straight to the database: user:add blocks this process, where the relay runs.
    addUser({ ...jwtApp, env: { ...jwtApp.env, DATABASE_URL: databaseUrl(ADMIN_URL, database) } }, { email, password });
    jwtJar = (await credentialsSignIn(jwtApp, email, password)).jar;
    dbJar = (await credentialsSignIn(dbApp, email, password)).jar;
    expect(await sessionEmail(jwtApp, jwtJar)).toBe(email);
  });

  afterAll(async () => {
    await direct?.end();
    await jwtApp?.stop();
    await dbApp?.stop();
    await relay?.close();
    await sink?.close();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  });

  async function rowCounts() {
    const counts: Record<string, number> = {};
    for (const table of ["User", "Session", "VerificationToken", "AuthEvent", "LimitCounter", "Password", "Account"]) {
      counts[table] = Number((await direct.query(`SELECT count(*) AS n FROM "${table}"`)).rows[0].n);
    }
    return counts;
  }

  async function expectOutageAnswers(fault: string) {
    const timings: Record<string, number> = {};

    // jwt: the session is read from the cookie, as fast as ever.
    const jwtSession = await timed(() => sessionEmail(jwtApp, jwtJar));
    expect(jwtSession.value).toBe(email);
    expect(jwtSession.ms).toBeLessThan(500);
    timings["jwt GET /auth/session"] = jwtSession.ms;

    // Credentials sign-in, a page form: the Configuration error page.
    for (const app of [jwtApp, dbApp]) {
      const jar = new CookieJar();
      const token = await csrfToken(app, jar);
      const page = await timed(() =>
        call(app, jar, "/auth/callback/credentials", { body: { csrfToken: token, email, password, callbackUrl: `${app.url}/account` } }),
      );
      await page.value.body?.cancel();
      expect(page.value.status, fault).toBe(302);
      expect(page.value.headers.get("Location")).toMatch(/\/auth\/error\?error=ServiceUnavailable$/);
      expect(page.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      timings[`${app === jwtApp ? "jwt" : "database"} credentials sign-in (page)`] = page.ms;

      // The same in JSON mode: 503 with the error page as url.
      const json = await timed(() =>
        call(app, jar, "/auth/callback/credentials", {
          body: { csrfToken: token, email, password },
          headers: { "X-Auth-Return-Redirect": "1" },
        }),
      );
      expect(json.value.status).toBe(503);
      expect(json.value.headers.get("Retry-After")).toBe("5");
      expect(((await json.value.json()) as { url: string }).url).toMatch(/\/auth\/error\?error=ServiceUnavailable$/);
      expect(json.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    }

    // An e-mail link request: the error page, no mail sent.
    const jar = new CookieJar();
    const token = await csrfToken(jwtApp, jar);
    const link = await timed(() => call(jwtApp, jar, "/auth/signin/email", { body: { csrfToken: token, email: "faults-link@example.com" } }));
    await link.value.body?.cancel();
    expect(link.value.status).toBe(302);
    expect(link.value.headers.get("Location")).toMatch(/\/auth\/error\?error=ServiceUnavailable$/);
    expect(link.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    timings["e-mail link request"] = link.ms;
    // Not counting the security e-mails of the owner's sign-ins from new browsers (ADR 081).
    expect(sink.messages.filter((m) => !isSecurityNotice(m))).toHaveLength(mails);

    // /account (both strategies) ends on the error page, which itself renders.
    for (const [app, jar2] of [
      [jwtApp, jwtJar],
      [dbApp, dbJar],
    ] as const) {
      const account = await timed(() => call(app, jar2, "/account"));
      await account.value.body?.cancel();
      expect(account.value.status).toBe(302);
      expect(account.value.headers.get("Location")).toMatch(/\/auth\/error\?error=ServiceUnavailable$/);
      expect(account.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      timings[`${app === jwtApp ? "jwt" : "database"} GET /account`] = account.ms;
      const errorPage = await call(app, new CookieJar(jar2.names().length ? Object.fromEntries(jar2.names().map((n) => [n, jar2.get(n)!])) : {}), "/auth/error?error=ServiceUnavailable");
      expect(errorPage.status).toBe(503);
      expect(errorPage.headers.get("Retry-After")).toBe("5");
      // What the visitor reads: the page's card (the catalogue itself ships with the page).
      const card = (html: string) => /<section class="card"[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
      const text = card(await errorPage.text());
      expect(text).toContain("The service is temporarily unavailable.");
      expect(text).not.toContain("configuration");
      // In the visitor's language.
      const german = await call(app, new CookieJar(), "/auth/error?error=ServiceUnavailable", { headers: { "Accept-Language": "de" } });
      expect(german.status).toBe(503);
      expect(card(await german.text())).toContain("Der Dienst ist vorübergehend nicht erreichbar.");
    }

    // A database session: 503 JSON, not "signed out".
    const dbSession = await timed(() => call(dbApp, dbJar, "/auth/session"));
    expect(dbSession.value.status).toBe(503);
    expect(await dbSession.value.json()).toEqual({ error: "ServiceUnavailable" });
    expect(dbSession.value.headers.get("Retry-After")).toBe("5");
    expect(dbSession.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    timings["database GET /auth/session"] = dbSession.ms;
    expect(dbJar.get("authjs.session-token")).toBeDefined();

    // Readiness.
    const ready = await fetch(`${jwtApp.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable", reason: "database" });

    console.log(`database ${fault}, DATABASE_TIMEOUT_MS=${TIMEOUT_MS}: ${Object.entries(timings).map(([k, v]) => `${k} ${v} ms`).join("; ")}`);
  }

  async function expectRecovered() {
    for (const app of [jwtApp, dbApp]) {
      // Ready again once a check reaches the database: asked until it says so.
      const ready = await waitUntil(
        async () => {
          const res = await fetch(`${app.url}/readyz`);
          await res.body?.cancel();
          return res.status;
        },
        (status) => status === 200,
        { everyMs: 250 },
      );
      expect(ready).toBe(200);
      const { res, jar } = await credentialsSignIn(app, email, password);
      expect(res.headers.get("Location")).toBe(`${app.url}/account`);
      expect(await sessionEmail(app, jar)).toBe(email);
      const account = await call(app, jar, "/account");
      expect(account.status).toBe(200);
      await account.body?.cancel();
    }
    expect(await sessionEmail(dbApp, dbJar)).toBe(email);
    const mailed = await requestEmailLink(jwtApp, sink, "faults-link@example.com", ++mails);
    const opened = await call(jwtApp, mailed.jar, mailed.link.pathname + mailed.link.search);
    await opened.body?.cancel();
    expect(await sessionEmail(jwtApp, mailed.jar)).toBe("faults-link@example.com");
  }

  it("with the database's port closed: answers within the timeout, writes nothing, and recovers when it returns", async () => {
    const before = await rowCounts();
    const logged = { jwt: jwtApp.logs().length, db: dbApp.logs().length };
    await relay.close();
    await expectOutageAnswers("cut");
    expect(await rowCounts()).toEqual(before);
    await relay.open();
    await expectRecovered();
    expectNoStackTrace(jwtApp);
    expectNoStackTrace(dbApp);
    // The outage is logged once as it begins, at error level, and once as it ends with what it
    // cost — not once per refused request — and background work carries no request's id.
    for (const [app, from] of [
      [jwtApp, logged.jwt],
      [dbApp, logged.db],
    ] as const) {
      await app.untilLogged((output) => output.slice(from).includes('"msg":"database-back"'));
      const lines = app
        .logs()
        .slice(from)
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      // One error line per event, not one per refused request: the outage itself, and at most the
      // revocation poll's own "stale" line (its list stays in force meanwhile).
      const errors = lines.filter((line) => line.level === "error").map((line) => line.msg);
      expect(errors.filter((msg) => msg === "database-unavailable")).toHaveLength(1);
      expect(new Set(errors).size).toBe(errors.length);
      expect(errors.every((msg) => msg === "database-unavailable" || msg === "session-revocations-stale")).toBe(true);
      const back = lines.find((line) => line.msg === "database-back")!;
      expect(back).toMatchObject({ level: "info", refusedRequests: expect.any(Number), downMs: expect.any(Number) });
      expect(back.refusedRequests as number).toBeGreaterThan(1);
      expect(back).not.toHaveProperty("reqId");
      const listener = lines.filter((l) => String(l.msg).startsWith("session-revocation"));
      if (app === jwtApp) expect(listener.map((l) => l.msg)).toContain("session-revocation-listener-lost");
      for (const line of listener) expect(line).not.toHaveProperty("reqId");
    }
  });

  it("with the database accepting connections and never answering: the same, within DATABASE_TIMEOUT_MS", async () => {
    const before = await rowCounts();
    relay.stall();
    await expectOutageAnswers("stall");
    expect(await rowCounts()).toEqual(before);
    relay.restore();
    await expectRecovered();
    expectNoStackTrace(jwtApp);
    expectNoStackTrace(dbApp);
    // Each outage is logged as such, with no stack.
    expect(jwtApp.logs()).toContain('"msg":"database-unavailable"');
  });

  it("DATABASE_POOL_MAX bounds the connections one instance opens, however many requests wait", async () => {
    const named = new URL(databaseUrl(ADMIN_URL, database));
    named.searchParams.set("application_name", "vestibule-pool-check");
    const small = await startApp({ DATABASE_URL: named.href, DATABASE_POOL_MAX: "2", AUTH_SESSION_STRATEGY: "database" });
    try {
      const jar = (await credentialsSignIn(small, email, password)).jar;
      let most = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const { rows } = await direct.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'vestibule-pool-check'`);
          most = Math.max(most, Number(rows[0].n));
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const answers = await Promise.all(Array.from({ length: 40 }, () => sessionEmail(small, jar)));
      sampling = false;
      await sampler;
      expect(answers.every((a) => a === email)).toBe(true);
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(2);
    } finally {
      await small.stop();
    }
  });

  it("a bad DATABASE_POOL_MAX or DATABASE_TIMEOUT_MS stops the start naming it", async () => {
    // The start itself once; every other bad value through the same parser it runs.
    await expect(startApp({ DATABASE_URL: databaseUrl(ADMIN_URL, database), DATABASE_TIMEOUT_MS: "5s" })).rejects.toThrow(/DATABASE_TIMEOUT_MS must be a whole number/);
    const base = { NODE_ENV: "production", AUTH_SECRET: "x".repeat(32), AUTH_URL: "https://app.example.com" };
    for (const [name, value] of [
      ["DATABASE_POOL_MAX", "0"],
      ["DATABASE_POOL_MAX", "ten"],
      ["DATABASE_POOL_MAX", "1001"],
      ["DATABASE_TIMEOUT_MS", "10"],
      ["DATABASE_TIMEOUT_MS", "-1"],
    ] as const) {
      expect(() => loadConfig({ ...base, [name]: value })).toThrow(new RegExp(`${name} must be a whole number`));
    }
    expect(loadConfig({ ...base, DATABASE_POOL_MAX: "3", DATABASE_TIMEOUT_MS: "250" })).toMatchObject({ databasePoolMax: 3, databaseTimeoutMs: 250 });
    expect(loadConfig(base)).toMatchObject({ databasePoolMax: 10, databaseTimeoutMs: 5_000 });
  });
});
