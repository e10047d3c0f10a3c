// npx tsx bench/profile-endpoint.ts <heap|cpu> [path] [count]: one jwt app started with
// --heap-prof (sampling heap profiler) or --cpu-prof, a signed-in session, `count` requests to
// `path` (default /auth/session) on one keep-alive connection, then a clean stop, which writes
// the profile to bench/results/profiles/. Prints the top costs (self bytes or self time by
// function). For finding where a request's allocation or time goes, not for figures to compare.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { MALLOC_ENV } from "../server/memory-limits.ts";
import { agent, benchServerEnv, cookiesOf, freePort, rawGet, request, root, sendSequentially, startServer } from "./harness";

const [kind = "heap", target = "/auth/session", countArg = "5000"] = process.argv.slice(2);
if (kind !== "heap" && kind !== "cpu") throw new Error("first argument: heap or cpu");
const count = Number(countArg);
const SECRET = "profile-secret-0123456789abcdef0123456789abcdef";
const EMAIL = "profile@example.com";
const PASSWORD = "profile-password-123";
const out = path.join(root, "bench/results/profiles");
mkdirSync(out, { recursive: true });
const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-profile-"));
const port = await freePort();
// heap: V8's sampling heap profiler over the requests alone (bench/heap-sampler.mjs, which counts
// what collections took away too); cpu: node's --cpu-prof over the whole run. With the memory
// limits' flags and variable given, server/memory-limits.ts does not re-exec (the profile would be
// the first process's).
const heapFile = path.join(out, `Heap.${Date.now()}.heapprofile`);
const flags = kind === "heap" ? [...(process.env.PROFILE_FLAGS?.split(" ") ?? []), "--max-old-space-size=96", "--max-semi-space-size=2", "--import", path.join(root, "bench/heap-sampler.mjs")] : ["--max-old-space-size=96", "--max-semi-space-size=2", "--cpu-prof", "--cpu-prof-interval=100", `--cpu-prof-dir=${out}`];
const before = new Set(readdirSync(out));
const app = await startServer(`jwt app (${kind} profile)`, [...flags, path.join(root, "server/main.ts")], benchServerEnv(port, dataDir, SECRET, { ...MALLOC_ENV, HEAP_SAMPLER_OUT: heapFile }), port);
try {
  const add = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/user-add.ts"), "--email", EMAIL, "--password", PASSWORD, "--name", "Profile"], { env: app.env, encoding: "utf8" });
  if (add.status !== 0) throw new Error(add.stderr);
  const csrf = await request(`${app.url}/auth/csrf`);
  const csrfCookie = cookiesOf(csrf.headers).join("; ");
  const signIn = await request(`${app.url}/auth/callback/credentials`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: csrfCookie },
    body: new URLSearchParams({ csrfToken: JSON.parse(csrf.body).csrfToken, email: EMAIL, password: PASSWORD }).toString(),
  });
  const session = cookiesOf(signIn.headers).find((c) => c.startsWith("authjs.session-token="));
  if (!session) throw new Error(`sign-in failed: ${signIn.status}`);
  const cookie = target === "/auth/session" ? session : target === "/auth/csrf" ? csrfCookie : undefined;
  const raw = rawGet(app, target, cookie);
  await sendSequentially(app, raw, 2_000);
  if (kind === "heap") await signal(app, "heap-sampler started");
  await sendSequentially(app, raw, count);
  if (kind === "heap") await signal(app, "heap-sampler written");
} finally {
  await app.stop();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}
/** Sends SIGUSR2 and waits for `line` on the server's output. */
async function signal(server: typeof app, line: string) {
  const from = server.output().length;
  server.child.kill("SIGUSR2");
  for (let i = 0; i < 500 && !server.output().slice(from).includes(line); i++) await new Promise((r) => setTimeout(r, 10));
}

const file = readdirSync(out).find((f) => !before.has(f) && f.endsWith(kind === "heap" ? ".heapprofile" : ".cpuprofile"));
if (!file) throw new Error("no profile written");
console.log(`profile: ${path.relative(root, path.join(out, file))}`);

type Frame = { functionName: string; url: string; lineNumber: number };
const totals = new Map<string, number>();
const label = (f: Frame) => `${f.functionName || "(anonymous)"} ${f.url.replace(/^file:\/\/.*?\/(node_modules|build|server|app)\//, "$1/")}:${f.lineNumber + 1}`;
let sum = 0;
if (kind === "heap") {
  type Node = { callFrame: Frame; selfSize: number; children: Node[] };
  const walk = (n: Node) => {
    totals.set(label(n.callFrame), (totals.get(label(n.callFrame)) ?? 0) + n.selfSize);
    sum += n.selfSize;
    n.children.forEach(walk);
  };
  walk(JSON.parse(readFileSync(path.join(out, file), "utf8")).head);
  console.log(`${(sum / count / 1024).toFixed(1)} KiB sampled per request`);
} else {
  type Node = { id: number; callFrame: Frame };
  const profile = JSON.parse(readFileSync(path.join(out, file), "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const key = label(byId.get(id)!.callFrame);
    const dt = profile.timeDeltas[i] ?? 0;
    totals.set(key, (totals.get(key) ?? 0) + dt);
    sum += dt;
  });
}
const top = [...totals].sort((a, b) => b[1] - a[1]).slice(0, 25);
for (const [name, value] of top) console.log(`${((100 * value) / sum).toFixed(1).padStart(5)} %  ${kind === "heap" ? `${(value / count).toFixed(0).padStart(5)} B/req  ` : ""}${name}`);
