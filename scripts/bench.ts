// npm run bench [-- --seconds 5 --connections 16 --soak-seconds 60 --no-build --only=main|alloc|logs|sizes]
// npm run bench -- --summarize bench/results/raw/<date>.json   (writes that run's summary again)
// The production build (jwt sessions; database sessions on SQLite and, when it
// answers, PostgreSQL) measured on loopback next to the references started in the same run —
// a bare node:http server answering the same JSON (the limit), a trivial React Router resource
// route served the same way as the app (the framework floor, bench/trivial), Auth.js
// (bench/authjs-server.mjs) and better-auth's get-session (bench/references, installed there on
// first use; skipped with the reason printed when it cannot be). The OAuth provider's GET /api/me
// (bearer) and POST /oauth/token (refresh grant, tokens made beforehand: scripts/refresh-tokens.ts)
// run in the same rounds. Each figure is printed with its ratio to each reference; server and load generator each get a core of their
// own when there are two. Then: p99 at half the maximum rate (open and closed loop), RSS after
// 60 s of mixed load under `npm start` and `node server/main.ts`, the cold start of the start
// command, and the heap allocated per request. The raw results go to bench/results/raw/<date>.json
// (ignored by git), their summary to bench/results/<date>.json (bench/summary.ts). The parts are functions of one BenchContext (bench/harness.ts), so
// a new part is one more entry in PARTS.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import {
  agent,
  ALLOCATION_FLAGS,
  PROMOTION_FLAGS,
  combine,
  benchServerEnv,
  cookiesOf,
  CORES,
  freePort,
  loadAverage,
  lowerDriverPriority,
  measure,
  measureAllocation,
  measurePromotion,
  measureFlow,
  memoryMb,
  PINNED,
  rawGet,
  rawGetBearer,
  request,
  root,
  startServer,
  type Measurement,
  type Server,
} from "../bench/harness";
import { runOpsBench } from "../bench/ops";
import { summaryText, writeResults, type RawResults } from "../bench/summary";

const { values: opts } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "16" },
    "soak-seconds": { type: "string", default: "60" },
    "no-build": { type: "boolean", default: false },
    // One part alone: the comparison with the references (main), the allocation per request of
    // the jwt app (alloc: bytes, not time, so it can run on a busy machine), or the operations
    // part (bench/ops.ts): logging cost (logs) or session lookup cost at size (sizes).
    only: { type: "string" },
    // A raw results file to summarise again into bench/results/<its date>.json; nothing is measured.
    summarize: { type: "string" },
  },
});
if (opts.only !== undefined && !["main", "alloc", "logs", "sizes"].includes(opts.only)) throw new Error("--only takes main, alloc, logs or sizes");
const ONLY = (opts.only ?? null) as "main" | "alloc" | "logs" | "sizes" | null;
const SECONDS = Number(opts.seconds);
const CONNECTIONS = Number(opts.connections);
const SOAK_SECONDS = Number(opts["soak-seconds"]);
const EMAIL = "bench@example.com";
const PASSWORD = "bench-password-123";
const SECRET = "bench-secret-0123456789abcdef0123456789abcdef";
const SIGNIN_USERS = 40;
const PG_ADMIN_URL = process.env.VESTIBULE_BENCH_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export type BenchContext = {
  servers: Server[];
  results: Record<string, Measurement>;
  notes: Record<string, unknown>;
  apps: { jwt: Server; sqlite: Server; postgres: Server | null };
  /** betterAuth: null when the package is not installed (the reason is printed). */
  refs: { bare: Server; trivial: Server; authjs: Server; betterAuth: Server | null };
  cookies: { jwt: string; sqlite: string; postgres: string | null; authjs: string; csrf: string; authjsCsrf: string; betterAuth: string | null };
  /** An access token for the jwt app's AUTH_URL/api, for GET /api/me (the provider is on in that app). */
  bearer: string;
  /** Unused refresh tokens of the jwt app's provider, each request its own (each use rotates one). */
  refresh: RefreshPool;
};

/**
 * The environment assignments and node flags of `npm start` (package.json), so the bench runs
 * the server exactly as operators do: `[NAME=value …] node [flags …] server/main.ts`.
 */
function startCommand(): { env: Record<string, string>; flags: string[] } {
  const start: string = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts.start;
  const words = start.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
    const [name, ...value] = words.shift()!.split("=");
    env[name!] = value.join("=");
  }
  // `exec node …` (ADR 106): the shell's exec changes nothing for the bench, which spawns node itself.
  if (words[0] === "exec") words.shift();
  if (words[0] !== "node" || words.at(-1) !== "server/main.ts") throw new Error(`unexpected start script: ${start}`);
  return { env, flags: words.slice(1, -1) };
}

/** A production server as `node server/main.ts` starts it, or (viaNpm) as `npm start` does: npm, its shell, then node. */
async function startApp(name: string, env: Record<string, string>, dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-bench-")), nodeFlags: string[] = [], viaNpm = false): Promise<Server> {
  const port = await freePort();
  const fullEnv = benchServerEnv(port, dataDir, SECRET, env);
  if (viaNpm) {
    // The npm that runs the bench (npm run bench), else the one on PATH.
    const npm = process.env.npm_execpath;
    return npm ? startServer(name, [npm, "start", "--silent"], fullEnv, port) : startServer(name, ["start", "--silent"], fullEnv, port, "listening on", "npm");
  }
  const start = startCommand();
  return startServer(name, [...start.flags, ...nodeFlags, path.join(root, "server/main.ts")], { ...fullEnv, ...start.env }, port);
}

function addUser(app: Server, email: string) {
  const add = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/user-add.ts"), "--email", email, "--password", PASSWORD, "--name", "Bench"], { env: app.env, encoding: "utf8" });
  if (add.status !== 0) throw new Error(add.stderr);
}

/** The sign-in scenario's users, straight in the jwt app's database (one process, one hash each). */
async function createUsers(app: Server) {
  process.env.VESTIBULE_DATA_DIR = app.env.VESTIBULE_DATA_DIR;
  process.env.AUTH_SECRET = SECRET;
  delete process.env.DATABASE_URL;
  const { upsertCredentialsUser } = await import("../app/auth/credentials/users.server");
  const { closeDb } = await import("../app/db/client.server");
  for (let i = 0; i < SIGNIN_USERS; i++) await upsertCredentialsUser({ email: `bench-${i}@example.com`, password: PASSWORD });
  await closeDb();
}

/**
 * An access token for `app`'s /api, as its provider signs one (RFC 9068, its current RS256 key,
 * made here in its database if it has none yet), for the bench user; valid an hour, the length of
 * any run. Built in this process, like createUsers, over the app's own data folder.
 */
async function bearerToken(app: Server): Promise<string> {
  process.env.VESTIBULE_DATA_DIR = app.env.VESTIBULE_DATA_DIR;
  process.env.AUTH_SECRET = SECRET;
  process.env.AUTH_URL = app.env.AUTH_URL;
  process.env.AUTH_PROVIDER = "true";
  delete process.env.DATABASE_URL;
  const { resetConfig } = await import("../app/auth/core/config.server");
  resetConfig();
  const { signAccessToken } = await import("./access-token");
  const { closeDb, db } = await import("../app/db/client.server");
  try {
    const user = await db().user.findUniqueOrThrow({ where: { email: EMAIL }, select: { id: true } });
    // The grant consent would leave: a resource refuses a user's token for a client the user never allowed.
    await db().oAuthPayload.create({ data: { kind: "Grant", id: `bench-${Date.now()}`, payload: "{}", accountId: user.id, clientId: "bench", expiresAt: new Date(Date.now() + 3_600_000) } });
    return await signAccessToken({ resourcePath: "/api", sub: user.id, clientId: "bench", scope: "openid email profile", lifetimeSeconds: 3_600 });
  } finally {
    await closeDb();
    resetConfig();
  }
}

/**
 * At most this many refresh grants a second are sent: each run of the refresh scenario takes this
 * many unused tokens per second it lasts (warm-up included), so that no token is presented twice
 * (a second use within the grace gets the stored answer: another, cheaper path).
 */
const REFRESH_RATE_BOUND = 3_000;

type RefreshPool = { clientId: string; tokens: string[]; handedOut: number };

/** Refresh tokens for the jwt app's provider, enough for every run of the refresh scenario (scripts/refresh-tokens.ts). */
async function refreshPool(app: Server): Promise<RefreshPool> {
  const runs = 1 + 0.5 + SECONDS + ROUNDS * 0.3;
  process.env.VESTIBULE_DATA_DIR = app.env.VESTIBULE_DATA_DIR;
  process.env.AUTH_SECRET = SECRET;
  process.env.AUTH_URL = app.env.AUTH_URL;
  process.env.AUTH_PROVIDER = "true";
  delete process.env.DATABASE_URL;
  const { resetConfig } = await import("../app/auth/core/config.server");
  resetConfig();
  const { mintRefreshTokens } = await import("./refresh-tokens");
  const { closeDb } = await import("../app/db/client.server");
  try {
    // A few over: each run rounds its share up.
    const { clientId, tokens } = await mintRefreshTokens(EMAIL, Math.ceil(runs * REFRESH_RATE_BOUND) + 100);
    return { clientId, tokens, handedOut: 0 };
  } finally {
    await closeDb();
    resetConfig();
  }
}

/** Raw token requests for a run of `seconds` (warm-up included), each with a refresh token not sent before. */
function refreshRequests(server: Server, pool: RefreshPool, seconds: number): string[] {
  const count = Math.ceil(seconds * REFRESH_RATE_BOUND);
  const tokens = pool.tokens.slice(pool.handedOut, pool.handedOut + count);
  pool.handedOut += tokens.length;
  if (tokens.length < count) throw new Error("the bench ran out of refresh tokens (refreshPool)");
  return tokens.map((token) => {
    const body = new URLSearchParams({ grant_type: "refresh_token", refresh_token: token, client_id: pool.clientId }).toString();
    return `POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  });
}

async function csrf(base: string) {
  const r = await request(`${base}/auth/csrf`);
  return { token: JSON.parse(r.body).csrfToken as string, cookie: cookiesOf(r.headers).join("; ") };
}

async function signIn(base: string, email = EMAIL, client?: string): Promise<string> {
  const c = await csrf(base);
  const r = await request(`${base}/auth/callback/credentials`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: c.cookie, ...(client ? { "X-Forwarded-For": client } : {}) },
    body: new URLSearchParams({ csrfToken: c.token, email, password: PASSWORD }).toString(),
  });
  if (r.status !== 302) throw new Error(`sign-in failed: ${r.status} ${r.body}`);
  const session = cookiesOf(r.headers).find((x) => x.startsWith("authjs.session-token="));
  if (!session) throw new Error("no session cookie");
  return session;
}

/** Where the references the app does not depend on are installed, on the bench's first use. */
const REFERENCES = path.join(root, "bench/references");

/**
 * The packages of bench/references/package.json (better-auth, pinned), installed there by the first
 * `npm run bench` that needs them: the app and its tests do not depend on them, so a plain install
 * stays as small as it was. Null when they are there; the reason when they cannot be installed.
 */
function installReferences(): string | null {
  if (existsSync(path.join(REFERENCES, "node_modules/better-auth/package.json"))) return null;
  console.log("installing the bench's references (bench/references/package.json: better-auth) …");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["install", "--no-audit", "--no-fund", "--no-package-lock"], { cwd: REFERENCES, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (result.status !== 0) return `npm install in bench/references failed (${(result.stderr || result.stdout || String(result.error)).trim().split("\n").slice(-2).join(" ")})`;
  return null;
}

/**
 * The better-auth reference (bench/references/better-auth-server.mjs). Null, with the reason
 * printed, when it cannot be installed or does not answer.
 */
async function startBetterAuth(): Promise<{ server: Server; cookie: string } | null> {
  const missing = installReferences();
  if (missing) {
    console.log(`better-auth reference skipped: ${missing}`);
    return null;
  }
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-bench-better-auth-"));
  const env = { ...process.env, NODE_ENV: "production", PORT: String(port), AUTH_SECRET: SECRET, BENCH_EMAIL: EMAIL, BENCH_PASSWORD: PASSWORD, BENCH_DATA_DIR: dataDir };
  let server: Server;
  try {
    server = await startServer("better-auth", [path.join(REFERENCES, "better-auth-server.mjs")], env, port);
  } catch (error) {
    console.log(`better-auth reference skipped: its server did not start (${(error as Error).message.split("\n").slice(0, 3).join(" ")})`);
    rmSync(dataDir, { recursive: true, force: true });
    return null;
  }
  const r = await request(`${server.url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: server.url },
    body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
  });
  const cookie = cookiesOf(r.headers).join("; ");
  const session = await request(`${server.url}/api/auth/get-session`, { headers: { Cookie: cookie } });
  if (r.status !== 200 || session.status !== 200 || !session.body.includes(EMAIL)) {
    console.log(`better-auth reference skipped: sign-in or get-session failed (${r.status} ${r.body.slice(0, 200)} / ${session.status} ${session.body.slice(0, 200)})`);
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    return null;
  }
  return { server, cookie };
}

async function postgresDatabase(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2_000 });
  admin.on("error", () => {});
  try {
    await admin.connect();
  } catch (e) {
    console.log(`PostgreSQL at ${new URL(PG_ADMIN_URL).host} unreachable (${(e as Error).message}): its scenario is skipped`);
    await admin.end().catch(() => {});
    return null;
  }
  const name = `vestibule_bench_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.end();
    },
  };
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "—");

function line(m: Measurement) {
  return `${m.name.padEnd(38)} ${fmt(m.rps).padStart(7)} req/s  p50 ${fmt(m.p50, 2).padStart(6)} ms  p99 ${fmt(m.p99, 2).padStart(7)} ms  CPU ${fmt(m.cpuUs).padStart(5)} µs/req  RSS ${fmt(m.rssMb).padStart(4)} MB${m.errors ? `  ${m.errors} errors` : ""}`;
}

/** Ratios to each reference: throughput (ours / theirs) and CPU per request (theirs / ours); above 1 is better for both. */
function ratios(m: Measurement, refs: [string, Measurement | undefined][]) {
  return refs
    .filter((r): r is [string, Measurement] => r[1] !== undefined)
    .map(([label, ref]) => `${label} ${fmt(m.rps / ref.rps, 2)}× req/s, ${fmt(ref.cpuUs / m.cpuUs, 2)}× less CPU`)
    .join("  |  ");
}

// ---------------------------------------------------------------------------------------------
// Parts

const SCENARIOS: {
  key: string;
  name: string;
  server: (ctx: BenchContext) => Server | null;
  path: string;
  cookie?: (ctx: BenchContext) => string | null;
  /** An access token sent as `Authorization: Bearer` instead of a cookie. */
  bearer?: (ctx: BenchContext) => string;
  /** Requests that can each be sent once: a fresh list for a run of `seconds`. */
  once?: (ctx: BenchContext, seconds: number) => string[];
  prefix?: string;
  authjs?: string;
}[] = [
  { key: "bare", name: "bare node:http (same JSON)", server: (c) => c.refs.bare, path: "/auth/session", prefix: '{"user"' },
  { key: "trivial", name: "trivial React Router resource route", server: (c) => c.refs.trivial, path: "/auth/session", prefix: '{"user"' },
  { key: "authjsSession", name: "Auth.js GET /auth/session (jwt)", server: (c) => c.refs.authjs, path: "/auth/session", cookie: (c) => c.cookies.authjs, prefix: '{"user"' },
  { key: "authjsCsrf", name: "Auth.js GET /auth/csrf", server: (c) => c.refs.authjs, path: "/auth/csrf", cookie: (c) => c.cookies.authjsCsrf },
  { key: "authjsProviders", name: "Auth.js GET /auth/providers", server: (c) => c.refs.authjs, path: "/auth/providers" },
  { key: "betterAuthSession", name: "better-auth GET get-session (cookie cache)", server: (c) => c.refs.betterAuth, path: "/api/auth/get-session", cookie: (c) => c.cookies.betterAuth, prefix: "{" },
  { key: "sessionJwt", name: "GET /auth/session (jwt)", server: (c) => c.apps.jwt, path: "/auth/session", cookie: (c) => c.cookies.jwt, prefix: '{"user"', authjs: "authjsSession" },
  { key: "sessionSqlite", name: "GET /auth/session (database, SQLite)", server: (c) => c.apps.sqlite, path: "/auth/session", cookie: (c) => c.cookies.sqlite, prefix: '{"user"', authjs: "authjsSession" },
  { key: "sessionPostgres", name: "GET /auth/session (database, PostgreSQL)", server: (c) => c.apps.postgres, path: "/auth/session", cookie: (c) => c.cookies.postgres, prefix: '{"user"', authjs: "authjsSession" },
  { key: "apiMeBearer", name: "GET /api/me (bearer token)", server: (c) => c.apps.jwt, path: "/api/me", bearer: (c) => c.bearer, prefix: '{"sub"', authjs: "authjsSession" },
  {
    key: "refreshGrant",
    name: "POST /oauth/token (refresh grant)",
    server: (c) => c.apps.jwt,
    path: "/oauth/token",
    once: (c, seconds) => refreshRequests(c.apps.jwt, c.refresh, seconds),
    prefix: '{"access_token"',
  },
  { key: "csrf", name: "GET /auth/csrf", server: (c) => c.apps.jwt, path: "/auth/csrf", cookie: (c) => c.cookies.csrf, authjs: "authjsCsrf" },
  { key: "providers", name: "GET /auth/providers", server: (c) => c.apps.jwt, path: "/auth/providers", authjs: "authjsProviders" },
];
const APP_KEYS = ["sessionJwt", "sessionSqlite", "sessionPostgres", "apiMeBearer", "csrf", "providers"];
const ROUNDS = 4;

function loadOf(ctx: BenchContext, s: (typeof SCENARIOS)[number], seconds: number, warmupMs: number) {
  const server = s.server(ctx)!;
  const raw = s.bearer ? rawGetBearer(server, s.path, s.bearer(ctx)) : rawGet(server, s.path, s.cookie?.(ctx) ?? undefined);
  const requests = s.once ? s.once(ctx, seconds + warmupMs / 1000) : [raw];
  return { requests, connections: CONNECTIONS, seconds, warmupMs, ...(s.prefix ? { expectBodyPrefix: s.prefix } : {}) };
}

/**
 * The references and Vestibule's endpoints side by side: after a warm-up of each server, ROUNDS
 * rounds in which every scenario runs for SECONDS / ROUNDS, in a rotating order — so that other
 * work on the machine weighs on all of them alike — then one figure per scenario.
 */
async function sideBySide(ctx: BenchContext) {
  const scenarios = SCENARIOS.filter((s) => s.server(ctx));
  for (const s of scenarios) await measure(s.name, s.server(ctx)!, loadOf(ctx, s, 1, 500));
  const runs = new Map<string, Measurement[]>();
  for (let round = 0; round < ROUNDS; round++) {
    const order = scenarios.map((_, i) => scenarios[(i + round) % scenarios.length]!);
    for (const s of order) {
      const m = await measure(s.name, s.server(ctx)!, loadOf(ctx, s, SECONDS / ROUNDS, 300));
      runs.set(s.key, [...(runs.get(s.key) ?? []), m]);
    }
  }
  for (const s of scenarios) ctx.results[s.key] = combine(runs.get(s.key)!);
  for (const s of scenarios) {
    const m = ctx.results[s.key]!;
    console.log(line(m));
    if (APP_KEYS.includes(s.key)) {
      const refs: [string, Measurement | undefined][] = [["bare", ctx.results.bare], ["RR", ctx.results.trivial], ["Auth.js", ctx.results[s.authjs!]]];
      if (s.key.startsWith("session")) refs.push(["better-auth", ctx.results.betterAuthSession]);
      // The bearer-protected resource beside the cookie session of the same app, measured in the same rounds.
      if (s.key === "apiMeBearer") refs.push(["session jwt", ctx.results.sessionJwt]);
      console.log(`${"".padEnd(38)} ${ratios(m, refs)}`);
    }
    // The token endpoint beside the cookie session of the same app (same process, same database).
    if (s.key === "refreshGrant") console.log(`${"".padEnd(38)} ${ratios(m, [["session jwt", ctx.results.sessionJwt], ["bare", ctx.results.bare]])}`);
  }
}

/** A full credentials sign-in (GET csrf + POST), Vestibule and Auth.js, 4 at a time, in alternating rounds. */
async function signIns(ctx: BenchContext) {
  let n = 0;
  const ours: Measurement[] = [];
  const theirs: Measurement[] = [];
  for (let round = 0; round < 2; round++) {
    ours.push(
      await measureFlow("credentials sign-in (csrf + POST)", ctx.apps.jwt, 4, SECONDS / 2, async () => {
        const i = n++;
        return (await signIn(ctx.apps.jwt.url, `bench-${i % SIGNIN_USERS}@example.com`, `10.9.${(i >> 8) & 255}.${i & 255}`)).length > 0;
      }, 500),
    );
    theirs.push(await measureFlow("Auth.js credentials sign-in", ctx.refs.authjs, 4, SECONDS / 2, async () => (await signIn(ctx.refs.authjs.url)).length > 0, 500));
  }
  ctx.results.signin = combine(ours);
  ctx.results.authjsSignin = combine(theirs);
  console.log(line(ctx.results.authjsSignin));
  console.log(line(ctx.results.signin));
  console.log(`${"".padEnd(38)} ${ratios(ctx.results.signin, [["Auth.js", ctx.results.authjsSignin]])}`);
}

/**
 * p99 at half the maximum rate: open loop (requests due at a fixed rate whatever the answers do,
 * latency from when each was due) and closed loop (each connection waits for its answer, then for
 * its next slot at its share of the rate). In HALF_RATE_ROUNDS rounds in a rotating order, and in
 * each round the maximum is measured again right before (1 s at full speed): this VM's speed
 * varies by a third from one minute to the next, and half of a maximum measured minutes earlier
 * in a fast spell was more than the server could do in a slow one — a queue, not a latency. One
 * histogram per scenario from its rounds. Beside them, bare node:http measured the same way: the
 * floor the load generator, the kernel and the machine give any server.
 */
const HALF_RATE_ROUNDS = 2;
/** The load generator's own longest stall beyond which a half-rate run is measured again (the target itself). */
const GENERATOR_STALL_LIMIT_MS = 10;
type HalfRateRepeat = { key: string; rate: number; p99: number; generatorStallMs: number };
async function halfRate(ctx: BenchContext) {
  const scenarios = SCENARIOS.filter((x) => (APP_KEYS.includes(x.key) || x.key === "bare") && x.server(ctx) && ctx.results[x.key]);
  const keyOf = (s: (typeof SCENARIOS)[number], loop: "Open" | "Closed") => (s.key === "bare" ? `bareAtHalfRate${loop}` : `${s.key}HalfRate${loop}`);
  const runs = new Map<string, Measurement[]>();
  const repeats: HalfRateRepeat[] = [];
  const seconds = Math.min(SECONDS, 3) / HALF_RATE_ROUNDS;
  for (let round = 0; round < HALF_RATE_ROUNDS; round++) {
    for (const s of scenarios.map((_, i) => scenarios[(i + round) % scenarios.length]!)) {
      const load = loadOf(ctx, s, 1, 300);
      const max = await measure(s.name, s.server(ctx)!, load);
      const rate = Math.max(1, Math.round(max.rps / 2));
      for (const loop of ["Open", "Closed"] as const) {
        const once = () => measure(`${s.name} at half rate`, s.server(ctx)!, { ...load, seconds, warmupMs: 300, rate, closedLoop: loop === "Closed" });
        let m = await once();
        // A run in which the load generator's own event loop stalled longer than the target
        // measured the generator: every request due meanwhile went out late, and open loop
        // counts that lateness as the server's. Measured again, once; both are printed.
        const stalled = m.generatorDelayMs?.max ?? 0;
        if (stalled > GENERATOR_STALL_LIMIT_MS) {
          console.log(`${s.name} at ${rate} req/s ${loop.toLowerCase()} loop measured again: p99 ${fmt(m.p99, 2)} ms with the load generator stalled ${fmt(stalled, 1)} ms`);
          repeats.push({ key: keyOf(s, loop), rate, p99: m.p99, generatorStallMs: stalled });
          m = await once();
        }
        runs.set(keyOf(s, loop), [...(runs.get(keyOf(s, loop)) ?? []), { ...m, rate }]);
      }
    }
  }
  ctx.notes.halfRateMeasuredAgain = repeats;
  for (const loop of ["Open", "Closed"] as const) {
    console.log(`\np99 at half the maximum rate (${loop === "Closed" ? "closed" : "open"} loop, ${HALF_RATE_ROUNDS} rounds, each at half the maximum measured just before):`);
    for (const s of scenarios) {
      const parts = runs.get(keyOf(s, loop))!;
      const rates = parts.map((p) => p.rate!);
      const m = { ...combine(parts), name: `${s.name} at ${rates.join(" / ")} req/s`, rate: Math.round(rates.reduce((a, b) => a + b, 0) / rates.length) };
      ctx.results[keyOf(s, loop)] = m;
      const own = m.generatorDelayMs;
      // How busy the server's core was (its CPU per request × the rate: above half, a request at
      // the rate costs more than one in a burst at full speed), and steal time meanwhile.
      const busy = (m.rps * m.cpuUs) / 1e4;
      console.log(`${line(m)}  server busy ${fmt(busy, 0)} %${m.stealMs ? `, steal ${fmt(m.stealMs, 0)} ms` : ""}${own ? `  generator's own delay p99 ${fmt(own.p99, 1)} / max ${fmt(own.max, 1)} ms` : ""}`);
    }
  }
}

/**
 * Sustained mixed load (session, csrf, providers in turn) on a jwt app started each way an
 * operator starts it — `npm start`, and `node server/main.ts` as a container runs it — then its
 * resident memory: the limits are the server's own (server/memory-limits.ts), so both must agree.
 */
async function soak(ctx: BenchContext) {
  // Both started afresh for this part, so that the two commands are compared in the same state;
  // the jwt app that served every scenario before (the sign-ins' Argon2 included) is reported beside.
  const viaNode = await startApp("jwt app (node server/main.ts)", {});
  ctx.servers.push(viaNode);
  const viaNpm = await startApp("jwt app (npm start)", {}, undefined, [], true);
  ctx.servers.push(viaNpm);
  const cookiesOfApp = async (app: Server) => {
    addUser(app, EMAIL);
    return { jwt: await signIn(app.url), csrf: (await csrf(app.url)).cookie };
  };
  const runs: [string, Server, { jwt: string; csrf: string }][] = [
    ["node server/main.ts", viaNode, await cookiesOfApp(viaNode)],
    ["npm start", viaNpm, await cookiesOfApp(viaNpm)],
  ];
  const memory: Record<string, { rss: number; peak: number }> = {};
  console.log("");
  for (const [command, app, cookies] of runs) {
    const requests = [rawGet(app, "/auth/session", cookies.jwt), rawGet(app, "/auth/csrf", cookies.csrf), rawGet(app, "/auth/providers")];
    const m = await measure(`mixed load ${SOAK_SECONDS} s, ${command}`, app, { requests, connections: CONNECTIONS, seconds: SOAK_SECONDS });
    memory[command] = memoryMb(app.pid);
    ctx.results[command === "npm start" ? "soakNpmStart" : "soak"] = m;
    console.log(`${line(m)}\n${"".padEnd(38)} RSS after ${SOAK_SECONDS} s of load: ${fmt(memory[command]!.rss)} MB (peak ${fmt(memory[command]!.peak)} MB)`);
    await app.stop();
  }
  ctx.notes.soakMemoryMb = memory;
  const longLived = memoryMb(ctx.apps.jwt.pid);
  ctx.notes.longLivedJwtAppMb = longLived;
  console.log(`${"".padEnd(38)} the jwt app after every scenario before (sign-ins included): RSS ${fmt(longLived.rss)} MB (peak ${fmt(longLived.peak)} MB)`);
}

/** The start command from spawn to listening: a fresh data folder (migrations run), then a restart on it (the compile cache warm). */
async function coldStart(ctx: BenchContext) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-bench-cold-"));
  const times: number[] = [];
  const cpu: number[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const app = await startApp(`cold-${i}`, {}, dataDir);
      times.push(app.startMs);
      cpu.push(app.startCpuUs / 1000);
      await app.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  ctx.notes.coldStartMs = { freshDataFolder: times[0], restarts: times.slice(1), cpuMs: cpu };
  console.log(
    `\ncold start (spawn → listening): ${fmt(times[0]!)} ms with a fresh data folder (migrations), ${times.slice(1).map((t) => fmt(t)).join(" / ")} ms on restart; CPU time to listening ${cpu.map((t) => fmt(t)).join(" / ")} ms`,
  );
}

/** The endpoints the allocation and promotion parts probe on `app` (a user added and signed in), as [name, raw request]. */
async function probedEndpoints(app: Server): Promise<[string, string][]> {
  addUser(app, EMAIL);
  const session = await signIn(app.url);
  const csrfCookie = (await csrf(app.url)).cookie;
  return [
    ["GET /auth/session (jwt)", rawGet(app, "/auth/session", session)],
    ["GET /auth/csrf", rawGet(app, "/auth/csrf", csrfCookie)],
    ["GET /auth/providers", rawGet(app, "/auth/providers")],
    ["GET /healthz (the server alone)", rawGet(app, "/healthz")],
  ];
}

/**
 * JavaScript heap allocated per request, each endpoint of the jwt app and a probe (the server's own
 * share): a server of its own with bench/alloc-probe.mjs and a young generation no run fills
 * (docs/decisions/069). Bytes, not time, so other work on the machine hardly moves it.
 */
async function allocation(ctx: BenchContext) {
  const app = await startApp("jwt app (allocation probe)", {}, undefined, ALLOCATION_FLAGS);
  try {
    const endpoints = await probedEndpoints(app);
    const out: Record<string, number> = {};
    console.log("\nJavaScript heap allocated per request (median of 3 runs of 2 000):");
    for (const [name, raw] of endpoints) {
      const { bytesPerRequest } = await measureAllocation(app, raw);
      out[name] = Math.round(bytesPerRequest);
      console.log(`${name.padEnd(38)} ${fmt(bytesPerRequest / 1024, 1).padStart(6)} KiB`);
    }
    ctx.notes.allocationBytesPerRequest = out;
  } finally {
    await app.stop();
    if (app.env.VESTIBULE_DATA_DIR) rmSync(app.env.VESTIBULE_DATA_DIR, { recursive: true, force: true });
  }
  await promotion(ctx);
}

/**
 * What of a request reaches the old generation, each endpoint of the jwt app under the bench's
 * load with the production limits (docs/decisions/096): V8's own count of promoted bytes, and
 * the young and old collections that ran meanwhile.
 */
async function promotion(ctx: BenchContext) {
  const app = await startApp("jwt app (promotion)", {}, undefined, PROMOTION_FLAGS);
  try {
    const endpoints = await probedEndpoints(app);
    const out: Record<string, { bytesPerRequest: number; heapGrowthPerRequest: number; youngCollections: number; oldCollections: number }> = {};
    console.log(`\nJavaScript heap promoted to the old generation per request, and the heap's growth per request between young collections (${CONNECTIONS} connections, 3 s, production limits):`);
    for (const [name, raw] of endpoints) {
      const measured = await measurePromotion(app, raw);
      out[name] = { ...measured, bytesPerRequest: Math.round(measured.bytesPerRequest), heapGrowthPerRequest: Math.round(measured.heapGrowthPerRequest) };
      console.log(
        `${name.padEnd(38)} ${fmt(measured.bytesPerRequest, 0).padStart(6)} B promoted, ${fmt(measured.heapGrowthPerRequest, 0).padStart(5)} B grown   (${measured.youngCollections} young, ${measured.oldCollections} old collections)`,
      );
    }
    ctx.notes.promotedBytesPerRequest = out;
  } finally {
    await app.stop();
    if (app.env.VESTIBULE_DATA_DIR) rmSync(app.env.VESTIBULE_DATA_DIR, { recursive: true, force: true });
  }
}

const PARTS: ((ctx: BenchContext) => Promise<void>)[] = [sideBySide, signIns, halfRate, soak, coldStart, allocation];

function verdicts(ctx: BenchContext) {
  const r = ctx.results;
  const ratio = (a?: Measurement, b?: Measurement) => (a && b ? a.rps / b.rps : NaN);
  // Issue 23's targets.
  const checks: [string, number, number][] = [
    ["session jwt ≥ 1.5× trivial React Router route", ratio(r.sessionJwt, r.trivial), 1.5],
    ["session jwt ≥ 6× Auth.js", ratio(r.sessionJwt, r.authjsSession), 6],
    ["session database (SQLite) ≥ 1.2× trivial route", ratio(r.sessionSqlite, r.trivial), 1.2],
    ["session database (PostgreSQL) ≥ 1.2× trivial route", ratio(r.sessionPostgres, r.trivial), 1.2],
    ["csrf ≥ 1.2× Auth.js", ratio(r.csrf, r.authjsCsrf), 1.2],
    ["providers ≥ 1.2× Auth.js", ratio(r.providers, r.authjsProviders), 1.2],
    // Issue 34: a bearer-token resource at least as fast as the jwt cookie session.
    ["GET /api/me (bearer) ≥ 1× GET /auth/session (jwt)", ratio(r.apiMeBearer, r.sessionJwt), 1],
  ];
  // The token endpoint's refresh grant: an absolute floor on the bench machine, not a ratio.
  const refreshChecks: [string, number, number][] = [["POST /oauth/token (refresh grant) ≥ 1 000 req/s", r.refreshGrant?.rps ?? NaN, 1_000]];
  console.log("\ntargets:");
  const out: RawResults["targets"] = {};
  for (const [label, value, target] of checks) {
    console.log(`  ${Number.isFinite(value) ? (value >= target ? "met   " : "MISSED") : "n/a   "} ${label}: ${fmt(value, 2)}×`);
    out[label] = { value, target, met: value >= target };
  }
  for (const [label, value, target] of refreshChecks) {
    console.log(`  ${Number.isFinite(value) ? (value >= target ? "met   " : "MISSED") : "n/a   "} ${label}: ${fmt(value)} req/s`);
    out[label] = { value, target, met: value >= target };
  }
  const p99s = Object.entries(r).filter(([k]) => /HalfRate(Open|Closed)$/.test(k) && !k.startsWith("bare")).map(([k, m]) => [k, m.p99] as const);
  for (const [k, p99] of p99s) {
    const floor = r[`bareAtHalfRate${k.endsWith("Open") ? "Open" : "Closed"}`];
    const again = ((ctx.notes.halfRateMeasuredAgain ?? []) as HalfRateRepeat[]).filter((x) => x.key === k);
    const againText = again.map((x) => `measured again once: first ${fmt(x.p99, 2)} ms with the generator stalled ${fmt(x.generatorStallMs, 1)} ms`).join("; ");
    console.log(`  ${p99 <= 10 ? "met   " : "MISSED"} p99 ≤ 10 ms at half rate, ${k}: ${fmt(p99, 2)} ms${floor ? ` (bare node:http the same way: ${fmt(floor.p99, 2)} ms)` : ""}${againText ? ` — ${againText}` : ""}`);
    out[`p99 at half rate, ${k}`] = { value: p99, target: 10, met: p99 <= 10, ...(again.length ? { measuredAgain: again } : {}) };
  }
  const soakMem = ctx.notes.soakMemoryMb as Record<string, { rss: number }> | undefined;
  for (const [command, memory] of Object.entries(soakMem ?? {})) {
    console.log(`  ${memory.rss <= 150 ? "met   " : "MISSED"} RSS ≤ 150 MB after ${SOAK_SECONDS} s of mixed load, ${command}: ${fmt(memory.rss)} MB`);
    out[`RSS after soak, ${command}`] = { value: memory.rss, target: 150, met: memory.rss <= 150 };
  }
  if (r.soak && r.soakNpmStart) console.log(`         throughput under load, npm start / node server/main.ts: ${fmt(r.soakNpmStart.rps / r.soak.rps, 2)}×`);
  const cold = ctx.notes.coldStartMs as { restarts: number[]; cpuMs: number[] } | undefined;
  if (cold) {
    console.log(
      `  ${Math.max(...cold.restarts) < 1500 ? "met   " : "MISSED"} cold start < 1.5 s: ${cold.restarts.map((t) => fmt(t)).join(" / ")} ms wall (${cold.cpuMs.map((t) => fmt(t)).join(" / ")} ms of CPU, fresh data folder first)`,
    );
  }
  return out;
}

async function main() {
  if (opts.summarize) {
    const raw: RawResults = JSON.parse(readFileSync(path.resolve(opts.summarize), "utf8"));
    const file = path.join(root, "bench/results", `${raw.date.slice(0, 10)}.json`);
    writeFileSync(file, summaryText(raw));
    console.log(`summary written to ${path.relative(root, file)}`);
    return;
  }
  const began = performance.now();
  lowerDriverPriority();
  const loadBefore = loadAverage();
  if (!opts["no-build"]) {
    for (const dir of [root, path.join(root, "bench/trivial")]) {
      const b = spawnSync(process.execPath, [path.join(root, "node_modules/@react-router/dev/bin.cjs"), "build", dir], { cwd: root, stdio: "ignore", env: { ...process.env, NODE_ENV: "production" } });
      if (b.status !== 0) throw new Error(`react-router build of ${dir} failed`);
    }
  }
  if (ONLY === "logs" || ONLY === "sizes") return runOpsBench({ only: ONLY, seconds: SECONDS, connections: CONNECTIONS });
  if (ONLY === "alloc") {
    const notes: Record<string, unknown> = {};
    console.log(`load average ${loadAverage()}`);
    try {
      await allocation({ notes } as BenchContext);
    } finally {
      agent.destroy();
    }
    return;
  }
  await comparison(began, loadBefore);
  if (ONLY !== "main") await runOpsBench({ only: null, seconds: SECONDS, connections: CONNECTIONS });
}

/** Our endpoints beside the three references, then the half-rate, soak and cold-start parts. */
async function comparison(began: number, loadBefore: string) {
  const servers: Server[] = [];
  const postgres = await postgresDatabase();
  try {
    // The sign-in scenario would meet the per-address limits within seconds, so it signs in as
    // SIGNIN_USERS users from varied client addresses (X-Forwarded-For, believed with the bench
    // as the one trusted proxy hop).
    // The provider is on in the jwt app for GET /api/me (its bearer token is made below).
    const jwt = await startApp("jwt app", { AUTH_TRUSTED_PROXIES: "1", AUTH_PROVIDER: "true" });
    servers.push(jwt);
    await createUsers(jwt);
    addUser(jwt, EMAIL);
    const sqlite = await startApp("database app (SQLite)", { AUTH_SESSION_STRATEGY: "database" });
    servers.push(sqlite);
    addUser(sqlite, EMAIL);
    let pgApp: Server | null = null;
    if (postgres) {
      pgApp = await startApp("database app (PostgreSQL)", { AUTH_SESSION_STRATEGY: "database", DATABASE_URL: postgres.url });
      servers.push(pgApp);
      addUser(pgApp, EMAIL);
    }
    const jwtCookie = await signIn(jwt.url);
    const sessionBody = (await request(`${jwt.url}/auth/session`, { headers: { Cookie: jwtCookie } })).body;

    const barePort = await freePort();
    const bareCode = `require("node:http").createServer((q, s) => { s.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "private, no-cache, no-store" }); s.end(${JSON.stringify(sessionBody)}); }).listen(${barePort}, "127.0.0.1", () => console.log("listening on"));`;
    const bare = await startServer("bare node:http", ["-e", bareCode], process.env, barePort);
    // Each reference is stopped by the finally below from the moment it runs, even if the next fails to start.
    servers.push(bare);
    const trivialPort = await freePort();
    const trivial = await startServer("trivial React Router", [path.join(root, "bench/trivial/server.mjs")], { ...process.env, NODE_ENV: "production", PORT: String(trivialPort) }, trivialPort);
    servers.push(trivial);
    const authjsPort = await freePort();
    const authjs = await startServer("Auth.js", [path.join(root, "bench/authjs-server.mjs")], { ...process.env, NODE_ENV: "production", PORT: String(authjsPort), AUTH_SECRET: SECRET, BENCH_EMAIL: EMAIL, BENCH_PASSWORD: PASSWORD }, authjsPort);
    servers.push(authjs);
    const betterAuth = await startBetterAuth();
    if (betterAuth) servers.push(betterAuth.server);

    const ctx: BenchContext = {
      servers,
      results: {},
      notes: {},
      apps: { jwt, sqlite, postgres: pgApp },
      refs: { bare, trivial, authjs, betterAuth: betterAuth?.server ?? null },
      cookies: {
        jwt: jwtCookie,
        sqlite: await signIn(sqlite.url),
        postgres: pgApp ? await signIn(pgApp.url) : null,
        authjs: await signIn(authjs.url),
        csrf: (await csrf(jwt.url)).cookie,
        authjsCsrf: (await csrf(authjs.url)).cookie,
        betterAuth: betterAuth?.cookie ?? null,
      },
      bearer: await bearerToken(jwt),
      refresh: await refreshPool(jwt),
    };

    console.log(
      `Vestibule benchmark: ${SECONDS} s per scenario, ${CONNECTIONS} connections, loopback, ${CORES} cores${PINNED ? " (server and load generator pinned to separate cores)" : " (not pinned)"}, Node ${process.version}, load average ${loadBefore}\n`,
    );
    for (const part of PARTS) await part(ctx);
    const targets = verdicts(ctx);
    const loadAfter = loadAverage();
    const seconds = (performance.now() - began) / 1000;
    console.log(`\nload average before ${loadBefore}, after ${loadAfter}; ${fmt(seconds)} s in all`);

    const files = writeResults(path.join(root, "bench/results"), {
      date: new Date().toISOString(),
      conditions: { cores: CORES, pinned: PINNED, node: process.version, seconds: SECONDS, connections: CONNECTIONS, loadAverageBefore: loadBefore, loadAverageAfter: loadAfter, startCommand: startCommand() },
      // Without the latency histograms (tens of thousands of buckets a run): p50 and p99 are kept.
      results: Object.fromEntries(Object.entries(ctx.results).map(([key, { hist: _hist, latencies: _latencies, ...kept }]) => [key, kept])),
      notes: ctx.notes,
      targets,
    });
    console.log(`raw results written to ${path.relative(root, files.raw)}, their summary to ${path.relative(root, files.summary)}`);
  } finally {
    for (const s of servers) await s.stop();
    for (const s of servers) if (s.env.VESTIBULE_DATA_DIR?.includes("vestibule-bench-")) rmSync(s.env.VESTIBULE_DATA_DIR, { recursive: true, force: true });
    await postgres?.drop();
    agent.destroy();
  }
}

main().catch((error) => {
  console.error(`bench failed: ${error.message}`);
  process.exitCode = 1;
});
