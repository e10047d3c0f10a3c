// Revocation across instances within 1 s (docs/decisions/067): two `npm start`
// instances on one PostgreSQL database; a session ended on A (a sign-out, or "sign out everywhere")
// is refused by B, measured 50 times per session strategy. The listener's connection killed by
// the server (pg_terminate_backend) comes back, and a revocation made while it was gone still
// reaches B within the bound. The 2 s poll alone could not pass: half its delays would exceed 1 s.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LISTENER_APPLICATION_NAME } from "../../app/db/listen.server";
import { call, credentialsSignIn } from "../support/app-client";
import { freePort, type RunningApp } from "../support/browser";
import { seedUser } from "../support/seed-user";
import { startInstance, type Instance } from "../support/deploy";
import { CookieJar } from "../support/http";
import { postgresUnreachable } from "../support/postgres-required";
import { ADMIN_URL, databaseUrl, runDatabasePrefix } from "../support/postgres";

const unreachable = await postgresUnreachable("revocation measurement");

/** Bound. */
const BOUND_MS = 1_000;
/**
 * Per session strategy, sign-outs and "sign out everywhere" alternating (25 of each). 50 rather
 * than 100: CI's runs measured p50 8-9 ms and a worst of 16-22 ms in 100 against the 1 s bound,
 * and the 2 s poll alone (what a broken NOTIFY falls back to) would miss the bound about every
 * second sample, so 50 cannot pass by luck. docs/decisions/088-test-suite-time.md
 */
const SAMPLES = 50;
const POLL_EVERY_MS = 5;

describe.skipIf(unreachable !== null).each(["jwt", "database"] as const)("revocation across two instances by LISTEN/NOTIFY (%s sessions)", (strategy) => {
  const database = `${runDatabasePrefix()}revocation_notify_${strategy}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-notify-"));
  const email = `notify-${strategy}@example.com`;
  const password = "listen notify password";
  let admin: pg.Client;
  let a: Instance;
  let b: Instance;
  const app = (instance: Instance) => ({ url: instance.url, env: instance.env }) as RunningApp;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${database}"`);
    const [portA, portB] = await Promise.all([freePort(), freePort()]);
    const env = {
      NODE_ENV: "production",
      AUTH_URL: `http://127.0.0.1:${portA}`,
      AUTH_SECRET: "vestibule-notify-test-secret-0123456789abcdef",
      DATABASE_URL: databaseUrl(ADMIN_URL, database),
      AUTH_SESSION_STRATEGY: strategy,
      VESTIBULE_DATA_DIR: dataDir,
    };
    a = await startInstance(portA, env);
    b = await startInstance(portB, env);
    await seedUser(app(a), { email, password });
    // An instance loads the list, and starts listening, at its first session read.
    await measure("signout");
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function signedIn(instance: Instance, jar: CookieJar): Promise<boolean> {
    const res = await call(app(instance), jar, "/auth/session");
    expect(res.status).toBe(200);
    return ((await res.json()) as { user?: unknown } | null)?.user !== undefined;
  }

  /** A session made on A and seen on B; then ended on A by `how`; ms until B refuses it. */
  async function measure(how: "signout" | "revoke-all", around: { before?: () => Promise<void>; after?: () => Promise<void> } = {}): Promise<number> {
    const { res, jar, csrfToken } = await credentialsSignIn(app(a), email, password);
    expect(res.status).toBe(302);
    // The cookie as it is now: the ending answer deletes it from the jar.
    const cookie = new CookieJar(Object.fromEntries(jar.names().map((n) => [n, jar.get(n)!])));
    expect(await signedIn(b, cookie)).toBe(true);
    await around.before?.();
    const ended =
      how === "signout"
        ? await call(app(a), jar, "/auth/signout", { body: { csrfToken } })
        : await call(app(a), jar, "/account", { body: { csrfToken, intent: "revoke-all" } });
    await ended.body?.cancel();
    const answered = performance.now();
    await around.after?.();
    expect(ended.status).toBe(302);
    expect(ended.headers.get("Location")).not.toContain("error=");
    expect(await signedIn(a, cookie)).toBe(false);
    while (performance.now() - answered < BOUND_MS * 4) {
      if (!(await signedIn(b, cookie))) return performance.now() - answered;
      await new Promise((r) => setTimeout(r, POLL_EVERY_MS));
    }
    throw new Error(`B still accepted the ended session ${BOUND_MS * 4} ms after A ended it (${how})`);
  }

  async function listeners(): Promise<number[]> {
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND query ILIKE 'LISTEN%'",
      [database, LISTENER_APPLICATION_NAME],
    );
    return rows.map((r) => r.pid);
  }

  async function waitFor(what: string, ok: () => Promise<boolean>) {
    const deadline = Date.now() + 15_000;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it(`a session ended on A is refused by B within 1 s, ${SAMPLES} times (sign-out and "sign out everywhere")`, async () => {
    await waitFor("both instances to listen", async () => (await listeners()).length === 2);
    const delays: number[] = [];
    for (let i = 0; i < SAMPLES; i++) delays.push(await measure(i % 2 === 0 ? "signout" : "revoke-all"));
    const sorted = [...delays].sort((x, y) => x - y);
    const p50 = sorted[Math.floor(sorted.length / 2)]!;
    const max = sorted.at(-1)!;
    console.log(`revocation A→B over NOTIFY (${strategy}, ${SAMPLES} samples): p50 ${p50.toFixed(1)} ms, p90 ${sorted[Math.floor(sorted.length * 0.9)]!.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
    expect(max).toBeLessThan(BOUND_MS);
  }, 180_000);

  it("after the database kills the listening connections, a revocation made before they are back still reaches B within 1 s, and one made after arrives by NOTIFY", async () => {
    await waitFor("both instances to listen", async () => (await listeners()).length === 2);
    const before = await listeners();
    // Just before A ends the session the database stops taking connections and kills both
    // listeners, so B's listener is down when A's NOTIFY goes out (A's pool keeps its open
    // connections); just after, connections are allowed again and B learns of the revocation
    // from the re-read it does on reconnecting (or, at worst, from its poll).
    let stillDown = false;
    const allow = (on: boolean) => admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS ${on}`);
    let whileDown: number;
    try {
      whileDown = await measure("revoke-all", {
        async before() {
          await allow(false);
          // With a timeout the call returns once the backends are gone.
          const killed = await admin.query<{ ok: boolean }>("SELECT pg_terminate_backend(pid, 5000) AS ok FROM unnest($1::int[]) AS pid", [before]);
          expect(killed.rows.every((r) => r.ok)).toBe(true);
          stillDown = (await listeners()).length === 0;
        },
        after: () => allow(true).then(() => undefined),
      });
    } finally {
      await allow(true);
    }
    expect(stillDown).toBe(true);
    await waitFor("both instances to listen again", async () => {
      const now = await listeners();
      return now.length === 2 && now.every((pid) => !before.includes(pid));
    });
    const afterReconnect = [await measure("signout"), await measure("revoke-all")];
    console.log(`revocation after the listener was killed (${strategy}): ${whileDown.toFixed(1)} ms while reconnecting, ${afterReconnect.map((d) => d.toFixed(1)).join(" / ")} ms after`);
    expect(whileDown).toBeLessThan(BOUND_MS);
    for (const d of afterReconnect) expect(d).toBeLessThan(BOUND_MS);
    expect(b.logs()).toContain("session-revocation-listener-lost");
    expect(b.logs()).toContain("session-revocation-listener-restored");
  }, 60_000);
});
