// npx tsx bench/refresh-probe.ts [count] [connections] [cpu]: the token endpoint's refresh grant
// alone, against one jwt app with the provider on, started as `npm start` runs it (SQLite, or
// PostgreSQL when DATABASE_URL is set: a fresh database is up to the caller). `count` tokens made
// beforehand (scripts/refresh-tokens.ts), a quarter of them sent first to warm up, the rest with
// `connections` at once; prints req/s, the server's CPU per request and the SQL statements per
// request (bench/statement-count.mjs). With `cpu`, V8's CPU profile of the measured requests goes
// to bench/results/profiles/ (bench/sampler.mjs) and its top costs are printed. For finding where
// a refresh's time goes and checking a change quickly, not for the figures `npm run bench` keeps.
// PROBE_ENV (a JSON object) adds to the server's environment, e.g. '{"AUTH_PROVIDER_REFRESH_GRACE":"0"}'.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { asyncContextFrameFlags, MALLOC_ENV, singleCpuGcFlags, V8_LIMITS } from "../server/runtime-flags.ts";
import { addUserAndSignIn, agent, benchServerEnv, cpuMicros, freePort, loadAverage, PINNED, root, signalProbe, startServer } from "./harness";

const [countArg = "4000", connArg = "8", kind = ""] = process.argv.slice(2);
const count = Number(countArg);
const connections = Number(connArg);
const SECRET = "probe-secret-0123456789abcdef0123456789abcdef";
const EMAIL = "probe@example.com";
const PASSWORD = "probe-password-123";
const out = path.join(root, "bench/results/profiles");
mkdirSync(out, { recursive: true });
const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-refresh-probe-"));
const countFile = path.join(dataDir, "statements");
const profileFile = path.join(out, `CPU.refresh.${Date.now()}.cpuprofile`);
/** PROBE_ENV's settings: a JSON object of strings, or the probe stops saying what is wrong. */
function probeEnv(): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(process.env.PROBE_ENV ?? "{}");
  } catch {
    parsed = null;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== "string")) {
    console.error(`PROBE_ENV must be a JSON object of strings, e.g. '{"AUTH_PROVIDER_REFRESH_GRACE":"0"}'`);
    process.exit(2);
  }
  return parsed as Record<string, string>;
}
const port = await freePort();
const flags = [
  `--max-old-space-size=${V8_LIMITS["--max-old-space-size"]}`,
  `--max-semi-space-size=${V8_LIMITS["--max-semi-space-size"]}`,
  ...asyncContextFrameFlags(),
  ...singleCpuGcFlags(PINNED ? 1 : undefined),
  "--import",
  path.join(root, "bench/statement-count.mjs"),
  ...(kind === "cpu" ? ["--import", path.join(root, "bench/sampler.mjs")] : []),
];
const env = benchServerEnv(port, dataDir, SECRET, { ...MALLOC_ENV, AUTH_PROVIDER: "true", STATEMENT_COUNT_OUT: countFile, SAMPLER_OUT: profileFile, SAMPLER_KIND: "cpu", ...probeEnv(), ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) });
const app = await startServer("jwt app (refresh probe)", [...flags, path.join(root, "server/main.ts")], env, port);
const statements = () => Number(readFileSync(countFile, "utf8").split("\n")[0]);
const settle = () => new Promise((r) => setTimeout(r, 120));

function refresh(clientId: string, token: string): Promise<number> {
  const body = new URLSearchParams({ grant_type: "refresh_token", refresh_token: token, client_id: clientId }).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(`${app.url}/oauth/token`, { method: "POST", agent, headers: { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function run(clientId: string, tokens: string[]): Promise<{ ms: number; failed: number }> {
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < tokens.length) if ((await refresh(clientId, tokens[next++]!)) !== 200) failed++;
    }),
  );
  return { ms: performance.now() - started, failed };
}

try {
  await addUserAndSignIn(app, EMAIL, PASSWORD);
  Object.assign(process.env, { VESTIBULE_DATA_DIR: dataDir, AUTH_SECRET: SECRET, AUTH_URL: app.url, AUTH_PROVIDER: "true" });
  const { mintRefreshTokens } = await import("../scripts/refresh-tokens");
  const { closeDb } = await import("../app/db/client.server");
  const { clientId, tokens } = await mintRefreshTokens(EMAIL, count);
  await closeDb();
  const warm = Math.floor(count / 4);
  const warmup = await run(clientId, tokens.slice(0, warm));
  if (warmup.failed) throw new Error(`${warmup.failed} warm-up refreshes failed`);
  if (kind === "cpu") await signalProbe(app, "sampler started");
  await settle();
  const [cpu0, st0, load] = [cpuMicros(app.pid), statements(), loadAverage()];
  const measured = await run(clientId, tokens.slice(warm));
  await settle();
  const n = count - warm;
  const [cpu1, st1] = [cpuMicros(app.pid), statements()];
  if (kind === "cpu") await signalProbe(app, "sampler written");
  console.log(
    `${n} refreshes, ${connections} at once: ${((n / measured.ms) * 1000).toFixed(0)} req/s, ${((cpu1 - cpu0) / n / 1000).toFixed(2)} ms CPU/req, ${((st1 - st0) / n).toFixed(2)} statements/req, ${measured.failed} failed; load ${load}`,
  );
  if (process.env.STATEMENT_TEXTS) for (const [sql, n] of JSON.parse(readFileSync(countFile, "utf8").split("\n")[1]!) as [string, number][]) console.log(`${String(n).padStart(6)}  ${sql.replace(/\s+/g, " ").slice(0, 220)}`);
} finally {
  await app.stop();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}

if (kind === "cpu") {
  type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
  const profile = JSON.parse(readFileSync(profileFile, "utf8")) as { nodes: Node[]; samples: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  for (const id of profile.samples) {
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.replace(/^file:\/\/.*?\/(node_modules|build|server|app)\//, "$1/")}:${f.lineNumber + 1}`;
    totals.set(key, (totals.get(key) ?? 0) + 1);
  }
  const busy = profile.samples.filter((id) => byId.get(id)!.callFrame.functionName !== "(idle)").length;
  console.log(`profile: ${path.relative(root, profileFile)}`);
  for (const [key, n] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${((n / busy) * 100).toFixed(1).padStart(5)} %  ${key}`);
}
