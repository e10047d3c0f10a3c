// The operations part of `npm run bench` (scripts/bench.ts) (contract §12; docs/decisions/050, 054), run after the
// speed scenarios or alone with --only=logs / --only=sizes:
//   logs:  GET /auth/session (jwt) with logging silent vs LOG_REQUESTS=true (one access line per
//          request, written to a pipe that is read, as a log collector would).
//   sizes: GET /auth/session (database strategy) on PostgreSQL with 1 k, 100 k and 1 M session rows
//          (seeded with INSERT … SELECT generate_series); p50/p99 at each size, and whether p99
//          stays within 20 % of the smallest size's.
// It starts its own servers (logging silent prints no ready line: it waits for /healthz) and
// shares the client, ports and cookies with the other parts through bench/harness.ts.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { benchServerEnv, cookiesOf, freePort, request, root } from "./harness";
const EMAIL = "bench-ops@example.com";
const PASSWORD = "bench-ops-password-123";
const SECRET = "bench-ops-secret-0123456789abcdef0123456789abcdef";
const SIZES = [1_000, 100_000, 1_000_000];
/** p99 at the largest size may exceed the smallest size's by this factor and still count as flat. */
const FLAT_FACTOR = 1.2;

export type OpsBenchOptions = { only: "logs" | "sizes" | null; seconds: number; connections: number };

type Server = { url: string; child: ChildProcess; dir: string; env: NodeJS.ProcessEnv; output: () => number };
type Result = { rps: number; p50: number; p99: number; errors: number };

async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "vestibule-bench-ops-"));
  const full = benchServerEnv(port, dir, SECRET, env);
  const child = spawn(process.execPath, [path.join(root, "server/main.ts")], { env: full, stdio: ["ignore", "pipe", "pipe"] });
  let bytes = 0;
  let text = "";
  // Every byte is read (and counted), so logging pays for its pipe as it would in production.
  child.stdout!.on("data", (d: Buffer) => {
    bytes += d.length;
    if (text.length < 100_000) text += d;
  });
  child.stderr!.on("data", (d: Buffer) => (text += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await request(`${url}/healthz`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const add = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/user-add.ts"), "--email", EMAIL, "--password", PASSWORD], { env: full, encoding: "utf8" });
  if (add.status !== 0) throw new Error(add.stderr);
  return { url, child, dir, env: full, output: () => bytes };
}

function stop(server: Server) {
  server.child.kill("SIGTERM");
  rmSync(server.dir, { recursive: true, force: true });
}

async function signIn(base: string): Promise<string> {
  const c = await request(`${base}/auth/csrf`);
  const token = JSON.parse(c.body).csrfToken as string;
  const r = await request(`${base}/auth/callback/credentials`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookiesOf(c.headers).join("; ") },
    body: new URLSearchParams({ csrfToken: token, email: EMAIL, password: PASSWORD }).toString(),
  });
  const session = cookiesOf(r.headers).find((x) => x.startsWith("authjs.session-token="));
  if (r.status !== 302 || !session) throw new Error(`sign-in failed: ${r.status}`);
  return session;
}

async function measure(seconds: number, connections: number, once: () => Promise<boolean>): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  const warmEnd = performance.now() + 500;
  const end = warmEnd + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const ok = await once().catch(() => false);
        if (t >= warmEnd) {
          latencies.push(performance.now() - t);
          if (!ok) errors++;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return { rps: latencies.length / seconds, p50: pct(0.5), p99: pct(0.99), errors };
}

const fmt = (name: string, r: Result) =>
  `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms${r.errors ? `   ${r.errors} errors` : ""}`;

/** Sums of several measurements of one variant (rounds interleaved with the others, so drift in the machine's load hits all alike). */
function combine(parts: Result[]): Result {
  const n = parts.length;
  return {
    rps: parts.reduce((t, r) => t + r.rps, 0) / n,
    p50: parts.reduce((t, r) => t + r.p50, 0) / n,
    p99: parts.reduce((t, r) => t + r.p99, 0) / n,
    errors: parts.reduce((t, r) => t + r.errors, 0),
  };
}

const LOG_ROUNDS = 3;

async function logsBench({ seconds, connections }: OpsBenchOptions) {
  console.log(`\nLogging cost: GET /auth/session (jwt), ${LOG_ROUNDS} interleaved rounds of ${(seconds / LOG_ROUNDS).toFixed(1)}s per variant, ${connections} connections`);
  const variants: [string, Record<string, string>][] = [
    ["logs silent", { VESTIBULE_LOG: "silent" }],
    ["LOG_LEVEL=info (events only)", { LOG_LEVEL: "info" }],
    ["LOG_LEVEL=info, LOG_REQUESTS=true", { LOG_LEVEL: "info", LOG_REQUESTS: "true" }],
  ];
  const apps: Server[] = [];
  try {
    for (const [, env] of variants) apps.push(await startServer({ AUTH_SESSION_STRATEGY: "jwt", ...env }));
    const cookies = await Promise.all(apps.map((app) => signIn(app.url)));
    const parts: Result[][] = variants.map(() => []);
    const before = apps.map((app) => app.output());
    for (let round = 0; round < LOG_ROUNDS; round++) {
      for (const [i, app] of apps.entries()) {
        parts[i]!.push(await measure(seconds / LOG_ROUNDS, connections, async () => (await request(`${app.url}/auth/session`, { headers: { Cookie: cookies[i]! } })).body.startsWith('{"user"')));
      }
    }
    const results = parts.map(combine);
    for (const [i, [name]] of variants.entries()) {
      console.log(`${fmt(name, results[i]!)}   ${((apps[i]!.output() - before[i]!) / 1024).toFixed(0)} KiB logged`);
    }
    const [silent, , access] = results;
    if (silent && access) {
      console.log(`access lines: ${(((silent.rps - access.rps) / silent.rps) * 100).toFixed(1)} % fewer req/s than silent, p50 ${(access.p50 - silent.p50 >= 0 ? "+" : "")}${(access.p50 - silent.p50).toFixed(2)} ms`);
    }
  } finally {
    for (const app of apps) stop(app);
  }
}

async function sizesBench({ seconds, connections }: OpsBenchOptions) {
  const adminUrl = process.env.VESTIBULE_BENCH_PG_URL || process.env.VESTIBULE_TEST_PG_URL || "postgresql://postgres@127.0.0.1:5432/postgres";
  const database = `vestibule_bench_sizes_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`\nLookup cost at size: skipped, PostgreSQL at ${new URL(adminUrl).host} unreachable (${(error as Error).message})`);
    return;
  }
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${database}"`);
  let app: Server | null = null;
  const direct = new pg.Client({ connectionString: url.href });
  try {
    app = await startServer({ AUTH_SESSION_STRATEGY: "database", DATABASE_URL: url.href, VESTIBULE_LOG: "silent" });
    await direct.connect();
    const cookie = await signIn(app.url);
    // Other users' sessions: 1 000 users, the rows spread over them, all live, all with a hash.
    await direct.query(`INSERT INTO "User" (id, email, "createdAt", "updatedAt") SELECT 'bench-user-' || g, 'bench-' || g || '@example.com', now(), now() FROM generate_series(1, 1000) g`);
    console.log(`\nLookup cost at size: GET /auth/session (database), PostgreSQL, ${seconds}s per size, ${connections} connections`);
    let seeded = 1; // the bench user's own session
    const results: { size: number; r: Result }[] = [];
    for (const size of SIZES) {
      const started = performance.now();
      await direct.query(
        `INSERT INTO "Session" (id, kind, "tokenHash", "userId", method, expires, "createdAt", "lastUsedAt")
         SELECT 'bench-' || g, 'database', md5(g::text) || md5('session-' || g), 'bench-user-' || (g % 1000 + 1), 'credentials',
                now() + interval '30 days', now(), now()
         FROM generate_series($1::int, $2::int) g`,
        [seeded, size - 1],
      );
      await direct.query(`ANALYZE "Session"`);
      seeded = size;
      const seedMs = performance.now() - started;
      const r = await measure(seconds, connections, async () => (await request(`${app!.url}/auth/session`, { headers: { Cookie: cookie } })).body.startsWith('{"user"'));
      results.push({ size, r });
      console.log(`${fmt(`${size.toLocaleString("en")} sessions`, r)}   (seeded in ${(seedMs / 1000).toFixed(1)} s)`);
    }
    const first = results[0]!.r.p99;
    const worst = Math.max(...results.map((x) => x.r.p99));
    const flat = worst <= first * FLAT_FACTOR;
    console.log(`p99 across sizes: ${results.map((x) => x.r.p99.toFixed(2)).join(" / ")} ms — ${flat ? "flat" : "NOT flat"} (largest ${((worst / first - 1) * 100).toFixed(0)} % over 1 k; bound ${Math.round((FLAT_FACTOR - 1) * 100)} %)`);
  } finally {
    if (app) stop(app);
    await direct.end().catch(() => {});
    await new Promise((r) => setTimeout(r, 500));
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

/** Runs the parts `only` selects (both when null); the build must exist (bench.ts makes it). */
export async function runOpsBench(options: OpsBenchOptions) {
  if (options.only !== "sizes") await logsBench(options);
  if (options.only !== "logs") await sizesBench(options);
}
