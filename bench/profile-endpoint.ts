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
// The sampling heap profiler keeps only what is still alive when the profile is written: a young
// generation no run fills (as for the allocation part of the bench) keeps every request's garbage.
// With the memory limits' flags and variable given, server/memory-limits.ts does not re-exec (the
// profile would be the first process's).
const flags = kind === "heap" ? ["--heap-prof", "--heap-prof-interval=256", `--heap-prof-dir=${out}`, "--min-semi-space-size=512", "--max-semi-space-size=512", "--max-old-space-size=2048"] : ["--max-old-space-size=96", "--max-semi-space-size=2", "--cpu-prof", "--cpu-prof-interval=100", `--cpu-prof-dir=${out}`];
const before = new Set(readdirSync(out));
const app = await startServer(`jwt app (${kind} profile)`, [...flags, path.join(root, "server/main.ts")], benchServerEnv(port, dataDir, SECRET, { ...MALLOC_ENV }), port);
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
  await sendSequentially(app, rawGet(app, target, cookie), count);
} finally {
  await app.stop();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });
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
for (const [name, value] of top) console.log(`${((100 * value) / sum).toFixed(1).padStart(5)} %  ${name}`);
