// npx tsx bench/profile-endpoint.ts <heap|cpu> [path] [count]: one jwt app, a signed-in session,
// 2 000 requests to `path` (default /auth/session) to warm up, then `count` more on one keep-alive
// connection under V8's sampling heap profiler or its CPU profiler (bench/sampler.mjs); the
// profile goes to bench/results/profiles/ (open a .cpuprofile in Chrome DevTools or speedscope for
// the flame graph). Prints the top costs: bytes per request or share of the busy time, by
// function (self). For finding where a request's allocation or time goes, not for figures to compare.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { asyncContextFrameFlags, MALLOC_ENV, singleCpuGcFlags, V8_LIMITS } from "../server/runtime-flags.ts";
import { addUserAndSignIn, agent, benchServerEnv, freePort, PINNED, rawGetSignedIn, root, sendSequentially, signalProbe, startServer } from "./harness";

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
// heap: V8's sampling heap profiler, cpu: its CPU profiler, each over the measured requests alone
// (bench/sampler.mjs), the server otherwise as `npm start` runs it. With the memory limits' flags
// and variable given (and the one-CPU collection flag when pinned: docs/decisions/101),
// server/memory-limits.ts does not restart it (the preload would run twice).
const profileFile = path.join(out, `${kind === "heap" ? "Heap" : "CPU"}.${Date.now()}.${kind === "heap" ? "heapprofile" : "cpuprofile"}`);
// PROFILE_FLAGS (node flags, space-separated) come last, so they can override the limits.
// The heap sampler keeps every sample (collected objects included) on the heap it samples: more
// old space, or a long run ends out of memory.
const flags = [`--max-old-space-size=${kind === "heap" ? 512 : V8_LIMITS["--max-old-space-size"]}`, `--max-semi-space-size=${V8_LIMITS["--max-semi-space-size"]}`, ...asyncContextFrameFlags(), ...singleCpuGcFlags(PINNED ? 1 : undefined), "--import", path.join(root, "bench/sampler.mjs"), ...(process.env.PROFILE_FLAGS?.split(" ").filter(Boolean) ?? [])];
const app = await startServer(`jwt app (${kind} profile)`, [...flags, path.join(root, "server/main.ts")], benchServerEnv(port, dataDir, SECRET, { ...MALLOC_ENV, SAMPLER_OUT: profileFile, SAMPLER_KIND: kind }), port);
try {
  const raw = rawGetSignedIn(app, target, await addUserAndSignIn(app, EMAIL, PASSWORD));
  await sendSequentially(app, raw, 2_000);
  await signalProbe(app, "sampler started");
  await sendSequentially(app, raw, count);
  await signalProbe(app, "sampler written");
} finally {
  await app.stop();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}

const file = path.basename(profileFile);
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
    // Waiting for the next request is no cost of one, nor is the profiler's own stop (inspector post).
    if (key.startsWith("(idle)") || key.startsWith("post node:inspector")) return;
    totals.set(key, (totals.get(key) ?? 0) + dt);
    sum += dt;
  });
}
const top = [...totals].sort((a, b) => b[1] - a[1]).slice(0, 25);
for (const [name, value] of top) console.log(`${((100 * value) / sum).toFixed(1).padStart(5)} %  ${kind === "heap" ? `${(value / count).toFixed(0).padStart(5)} B/req  ` : ""}${name}`);
