// npm run bench [-- --seconds 5 --connections 16 --no-build --only=logs|sizes]
// Starts the production build (jwt and database sessions) and a bare node:http server answering
// the same JSON, then measures requests per second and p50/p99 latency on loopback for each
// scenario of the contract (§9), printing the ratio to the baseline measured in the same run.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runOpsBench } from "./bench-ops";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values: opts } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "16" },
    "no-build": { type: "boolean", default: false },
    // Only the operations part (scripts/bench-ops.ts): logging cost, or lookup cost at size.
    only: { type: "string" },
  },
});
if (opts.only !== undefined && opts.only !== "logs" && opts.only !== "sizes") throw new Error("--only takes logs or sizes");
const ONLY = (opts.only ?? null) as "logs" | "sizes" | null;
const SECONDS = Number(opts.seconds);
const CONNECTIONS = Number(opts.connections);
const EMAIL = "bench@example.com";
const PASSWORD = "bench-password-123";

type Server = { url: string; child: ChildProcess; dir: string; env: NodeJS.ProcessEnv };

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(child: ChildProcess, text: string) {
  let out = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready:\n${out}`)), 20_000);
    const on = (d: Buffer) => {
      out += d;
      if (out.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", on);
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`exited ${code}:\n${out}`)));
  });
}

async function startApp(strategy: "jwt" | "database", extra: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "vestibule-bench-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTH_URL: `http://127.0.0.1:${port}`,
    AUTH_SECRET: "bench-secret-0123456789abcdef0123456789abcdef",
    AUTH_SESSION_STRATEGY: strategy,
    VESTIBULE_DATA_DIR: dir,
    VESTIBULE_LOG: "silent",
    ...extra,
  };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [path.join(root, "scripts/server.js")], { env, stdio: ["ignore", "pipe", "pipe"] });
  await waitFor(child, "listening on");
  const add = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/user-add.ts"), "--email", EMAIL, "--password", PASSWORD, "--name", "Bench"], { env, encoding: "utf8" });
  if (add.status !== 0) throw new Error(add.stderr);
  return { url: `http://127.0.0.1:${port}`, child, dir, env };
}

async function startBaseline(body: string): Promise<Server> {
  const port = await freePort();
  const code = `require("node:http").createServer((q, s) => { s.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "private, no-cache, no-store" }); s.end(${JSON.stringify(body)}); }).listen(${port}, "127.0.0.1", () => console.log("listening on"));`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "pipe"] });
  await waitFor(child, "listening on");
  return { url: `http://127.0.0.1:${port}`, child, dir: "", env: {} };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function request(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? "GET", headers: init.headers, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

const cookiesOf = (h: http.IncomingHttpHeaders) => (h["set-cookie"] ?? []).map((c) => c.split(";")[0]!);

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

const SIGNIN_USERS = 60;
let signins = 0;

/** Creates the sign-in scenario's users straight in the app's database (one process, one hash each). */
async function createUsers(app: Server) {
  process.env.VESTIBULE_DATA_DIR = app.env.VESTIBULE_DATA_DIR;
  process.env.AUTH_SECRET = app.env.AUTH_SECRET;
  const { upsertCredentialsUser } = await import("../app/auth/credentials/users.server");
  const { closeDb } = await import("../app/db/client.server");
  for (let i = 0; i < SIGNIN_USERS; i++) await upsertCredentialsUser({ email: `bench-${i}@example.com`, password: PASSWORD });
  await closeDb();
}

type Result = { name: string; rps: number; p50: number; p99: number; errors: number };

async function measure(name: string, connections: number, once: () => Promise<boolean>): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + SECONDS * 1000;
  const warmEnd = performance.now() + 500;
  const start = performance.now();
  let counted = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const ok = await once().catch(() => false);
        const now = performance.now();
        if (t >= warmEnd) {
          latencies.push(now - t);
          counted++;
          if (!ok) errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - Math.max(start, warmEnd - 500) - 500) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return { name, rps: counted / elapsed, p50: pct(0.5), p99: pct(0.99), errors };
}

function row(r: Result, baseline?: Result) {
  const ratio = baseline ? `${(r.rps / baseline.rps).toFixed(2)}× baseline` : "";
  return `${r.name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   ${ratio}${r.errors ? `   ${r.errors} errors` : ""}`;
}

async function main() {
  if (!opts["no-build"]) {
    const b = spawnSync(process.execPath, [path.join(root, "node_modules/@react-router/dev/bin.cjs"), "build"], { cwd: root, stdio: "ignore", env: { ...process.env, NODE_ENV: "production" } });
    if (b.status !== 0) throw new Error("react-router build failed");
  }
  if (ONLY) return runOpsBench({ only: ONLY, seconds: SECONDS, connections: CONNECTIONS });
  const servers: Server[] = [];
  try {
    // The sign-in scenario would meet the per-address and per-client limits within seconds, so
    // it signs in as SIGNIN_USERS users from varied client addresses (X-Forwarded-For, believed
    // with the bench as the one trusted proxy hop).
    const jwtApp = await startApp("jwt", { AUTH_TRUSTED_PROXIES: "1" });
    await createUsers(jwtApp);
    const dbApp = await startApp("database");
    servers.push(jwtApp, dbApp);
    const jwtCookie = await signIn(jwtApp.url);
    const dbCookie = await signIn(dbApp.url);
    const sessionBody = (await request(`${jwtApp.url}/auth/session`, { headers: { Cookie: jwtCookie } })).body;
    const baseline = await startBaseline(sessionBody);
    servers.push(baseline);
    const csrfJar = await csrf(jwtApp.url);

    console.log(`Vestibule benchmark: ${SECONDS}s per scenario, ${CONNECTIONS} connections, loopback, ${os.cpus().length} cores, Node ${process.version}\n`);
    const base = await measure("baseline node:http (same JSON)", CONNECTIONS, async () => (await request(baseline.url)).status === 200);
    console.log(row(base));
    const scenarios: [string, number, () => Promise<boolean>][] = [
      ["GET /auth/session (jwt)", CONNECTIONS, async () => (await request(`${jwtApp.url}/auth/session`, { headers: { Cookie: jwtCookie } })).body.startsWith('{"user"')],
      ["GET /auth/session (database)", CONNECTIONS, async () => (await request(`${dbApp.url}/auth/session`, { headers: { Cookie: dbCookie } })).body.startsWith('{"user"')],
      ["GET /auth/csrf", CONNECTIONS, async () => (await request(`${jwtApp.url}/auth/csrf`, { headers: { Cookie: csrfJar.cookie } })).status === 200],
      ["GET /auth/providers", CONNECTIONS, async () => (await request(`${jwtApp.url}/auth/providers`)).status === 200],
      ["credentials sign-in (csrf + POST)", 4, async () => {
        const n = signins++;
        return (await signIn(jwtApp.url, `bench-${n % SIGNIN_USERS}@example.com`, `10.9.${(n >> 8) & 255}.${n & 255}`)).length > 0;
      }],
    ];
    for (const [name, connections, once] of scenarios) console.log(row(await measure(name, connections, once), base));
    const rss = (pid: number | undefined) => {
      const r = spawnSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" });
      return `${(Number(r.stdout.trim()) / 1024).toFixed(0)} MB`;
    };
    console.log(`\nRSS after the run: jwt app ${rss(jwtApp.child.pid)}, database app ${rss(dbApp.child.pid)}, baseline ${rss(baseline.child.pid)}`);
  } finally {
    for (const s of servers) {
      s.child.kill("SIGTERM");
      if (s.dir) rmSync(s.dir, { recursive: true, force: true });
    }
    agent.destroy();
  }
  await runOpsBench({ only: null, seconds: SECONDS, connections: CONNECTIONS });
}

main().catch((error) => {
  console.error(`bench failed: ${error.message}`);
  process.exitCode = 1;
});
