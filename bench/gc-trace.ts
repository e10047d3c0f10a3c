// npx tsx bench/gc-trace.ts [path] [rate] [closed]: one jwt app as `npm start` runs it plus
// --trace-gc, a signed-in session, load on `path` (default /auth/session) from the bench's load
// generator on its own core — at full speed, or at `rate` requests/s (open loop, or closed loop
// with a third argument "closed") — and what V8 collected meanwhile: collections by kind, their
// total and longest pauses, beside the run's p50/p99 (GC_TRACE_RAW=n: the first n trace lines too;
// GC_TRACE_FLAGS: node flags to try). For explaining a latency figure (is the tail
// the collector's?), not for figures to compare.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { asyncContextFrameFlags, MALLOC_ENV, V8_LIMITS } from "../server/runtime-flags.ts";
import { addUserAndSignIn, agent, benchServerEnv, freePort, measure, rawGet, root, startServer } from "./harness";

const [target = "/auth/session", rateArg, loop] = process.argv.slice(2);
const rate = rateArg ? Number(rateArg) : undefined;
const SECRET = "gc-trace-secret-0123456789abcdef0123456789abcdef";
const EMAIL = "gc-trace@example.com";
const PASSWORD = "gc-trace-password-123";
const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-gc-trace-"));
const port = await freePort();
// The limits given on the command line, so server/memory-limits.ts does not restart the process;
// GC_TRACE_FLAGS (space-separated node flags) last, to try another setting.
const flags = [
  ...Object.entries(V8_LIMITS).map(([k, v]) => `${k}=${v}`),
  ...asyncContextFrameFlags(),
  "--trace-gc",
  ...(process.env.GC_TRACE_FLAGS?.split(" ").filter(Boolean) ?? []),
];
const app = await startServer("jwt app (gc trace)", [...flags, path.join(root, "server/main.ts")], benchServerEnv(port, dataDir, SECRET, { ...MALLOC_ENV }), port);
try {
  const { session, csrfCookie } = await addUserAndSignIn(app, EMAIL, PASSWORD);
  const cookie = target === "/auth/session" ? session : target === "/auth/csrf" ? csrfCookie : undefined;
  const raw = rawGet(app, target, cookie);
  // A warm-up at full speed, so the optimising compiler has settled before the traced run.
  await measure("warm-up", app, { requests: [raw], connections: 16, seconds: 3 });
  const from = app.output().length;
  const result = await measure(target, app, { requests: [raw], connections: 16, seconds: 5, ...(rate ? { rate, closedLoop: loop === "closed" } : {}) });
  const trace = app.output().slice(from);
  if (process.env.GC_TRACE_RAW) console.log(trace.split("\n").filter((l) => /Mark-Compact|Scavenge|marking/i.test(l)).slice(0, Number(process.env.GC_TRACE_RAW)).join("\n"));
  // "[pid:0x…]   1234 ms: Scavenge 20.1 (22.3) -> 19.0 (23.3) MB, pooled: 0 MB, 0.85 / 0.00 ms  (average mu = …"
  const kinds = new Map<string, { count: number; totalMs: number; maxMs: number }>();
  for (const m of trace.matchAll(/ms: ([A-Za-z-]+(?: \(reduce\))?)[^,]*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ ([\d.]+) ms/g)) {
    const kind = kinds.get(m[1]!) ?? { count: 0, totalMs: 0, maxMs: 0 };
    const pause = Number(m[2]);
    kind.count++;
    kind.totalMs += pause;
    kind.maxMs = Math.max(kind.maxMs, pause);
    kinds.set(m[1]!, kind);
  }
  const heap = [...trace.matchAll(/-> ([\d.]+) \(([\d.]+)\) MB/g)].at(-1);
  console.log(`${target}${rate ? ` at ${rate} req/s ${loop === "closed" ? "closed" : "open"} loop` : " at full speed"}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.cpuUs.toFixed(0)} µs CPU/request, RSS ${result.rssMb.toFixed(0)} MB, heap after ${heap?.[1]} (${heap?.[2]}) MB`);
  for (const [kind, k] of kinds) console.log(`  ${kind.padEnd(22)} ${String(k.count).padStart(5)} × , ${k.totalMs.toFixed(1).padStart(7)} ms in all (${((100 * k.totalMs) / (result.seconds * 1000)).toFixed(1)} % of the run), longest ${k.maxMs.toFixed(2)} ms`);
} finally {
  await app.stop();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}
