// npx tsx bench/gc-trace.ts [path] [rate] [closed]: one jwt app as `npm start` runs it plus
// --trace-gc, a signed-in session, load on `path` (default /auth/session) from the bench's load
// generator on its own core — at full speed, or at `rate` requests/s (open loop, or closed loop
// with a third argument "closed") — and what V8 collected meanwhile: collections by kind, their
// total and longest pauses, beside the run's p50/p99 (GC_TRACE_RAW=n: the first n trace lines too;
// GC_TRACE_FLAGS: node flags to try; the app's settings come from the environment, e.g.
// AUTH_SESSION_STRATEGY=database). Then every answer slower than SPIKE_MS (default 10), each
// put down to what happened on the machine's clock while it waited or just before it was due (a
// backlog drains after the stall that made it): both processes stalled at once (the machine), a
// collection in the server (bench/stall-probe.mjs), another stall of the server's event loop, a
// stall of the load generator, or nothing seen. GC_TRACE_REPEAT=n: n runs on the same process,
// the ones before the traced run a line each (the trace and the attribution cover the last);
// GC_TRACE_OUT=file: the server's whole output, start and warm-up, then the traced run (with
// GC_TRACE_FLAGS="--trace-opt --trace-deopt": when the compiler worked). For explaining a latency
// figure (is the tail the collector's?), not for figures to compare.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { asyncContextFrameFlags, MALLOC_ENV, singleCpuGcFlags, V8_LIMITS } from "../server/runtime-flags.ts";
import { addUserAndSignIn, agent, benchServerEnv, freePort, lowerDriverPriority, measure, PINNED, rawGetSignedIn, root, signalProbe, startServer } from "./harness";

const [target = "/auth/session", rateArg, loop] = process.argv.slice(2);
const rate = rateArg ? Number(rateArg) : undefined;
const SPIKE_MS = Number(process.env.SPIKE_MS ?? 10);
const SECRET = "gc-trace-secret-0123456789abcdef0123456789abcdef";
const EMAIL = "gc-trace@example.com";
const PASSWORD = "gc-trace-password-123";
lowerDriverPriority();
const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-gc-trace-"));
const port = await freePort();
// The limits given on the command line, so server/memory-limits.ts does not restart the process
// (with the one-CPU collection flag when the server is pinned, as it would add: docs/decisions/101);
// GC_TRACE_FLAGS (space-separated node flags) last, to try another setting.
const flags = [
  ...Object.entries(V8_LIMITS).map(([k, v]) => `${k}=${v}`),
  ...asyncContextFrameFlags(),
  ...singleCpuGcFlags(PINNED ? 1 : undefined),
  "--trace-gc",
  "--import",
  path.join(root, "bench/stall-probe.mjs"),
  ...(process.env.GC_TRACE_FLAGS?.split(" ").filter(Boolean) ?? []),
];
const app = await startServer("jwt app (gc trace)", [...flags, path.join(root, "server/main.ts")], benchServerEnv(port, dataDir, SECRET, { ...MALLOC_ENV }), port);
try {
  const raw = rawGetSignedIn(app, target, await addUserAndSignIn(app, EMAIL, PASSWORD));
  // A warm-up at full speed, so the optimising compiler has settled before the traced run.
  await measure("warm-up", app, { requests: [raw], connections: 16, seconds: 3 });
  for (let i = 1; i < Number(process.env.GC_TRACE_REPEAT ?? 1); i++) {
    const r = await measure(target, app, { requests: [raw], connections: 16, seconds: 5, spikeMs: SPIKE_MS, ...(rate ? { rate, closedLoop: loop === "closed" } : {}) });
    console.log(`repeat ${i}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.cpuUs.toFixed(0)} µs CPU/request`);
  }
  const from = app.output().length;
  await stallProbe(); // forget the start, the sign-in and the warm-up
  const result = await measure(target, app, { requests: [raw], connections: 16, seconds: 5, spikeMs: SPIKE_MS, ...(rate ? { rate, closedLoop: loop === "closed" } : {}) });
  const trace = app.output().slice(from);
  const server = await stallProbe();
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
  attribute(result.spikes ?? [], result.requests, server, result.generatorStalls ?? []);
  if (process.env.GC_TRACE_OUT) writeFileSync(process.env.GC_TRACE_OUT, `${app.output().slice(0, from)}\n=== measured run ===\n${trace}`);
  if (process.env.GC_TRACE_DUMP) writeFileSync(process.env.GC_TRACE_DUMP, JSON.stringify({ spikes: result.spikes, generatorStalls: result.generatorStalls, server }));
} finally {
  await app.stop();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}

type Probe = { gcs: [number, number, string][]; stalls: [number, number][] };

/** The server's collections and event-loop stalls since the last call (bench/stall-probe.mjs, on SIGUSR2). */
async function stallProbe(): Promise<Probe> {
  return JSON.parse((await signalProbe(app, "stall-probe ")).rest) as Probe;
}

/**
 * Each slow answer [due, latency] put down to the first of these overlapping the time from
 * `latency` before it was due to its answer: the server and the load generator stalled at the
 * same moment (the machine paused both: the VM, the kernel); a collection in the server of 1 ms or
 * more; another stall of the server's event loop; a stall of the generator alone; else nothing seen.
 */
function attribute(spikes: [number, number][], requests: number, server: Probe, generatorStalls: [number, number][]) {
  type Event = [number, number, ...unknown[]];
  const overlapping = (events: Event[], from: number, to: number) => events.filter(([at, ms]) => at < to && at + ms > from);
  const serverPauses: Event[] = [...server.gcs.filter((g) => g[1] >= 1), ...server.stalls];
  const causes = new Map<string, { count: number; worst: number; longestEvent: number }>();
  for (const [due, latency] of spikes) {
    const from = due - latency;
    const to = due + latency;
    const own = overlapping(generatorStalls, from, to);
    const both = own.flatMap((o) => overlapping(serverPauses, o[0], o[0] + o[1]).map((p) => Math.min(o[1], p[1])));
    const gc = overlapping(server.gcs, from, to).filter((g) => g[1] >= 1);
    const stall = overlapping(server.stalls, from, to);
    const longestOf = (events: Event[]) => Math.max(...events.map((e) => e[1]));
    const longestEvent = (events: Event[]) => events.reduce((a, b) => (b[1] > a[1] ? b : a));
    const [cause, event] = both.length
      ? ["the machine (server and generator stalled at once)", Math.max(...both)]
      : gc.length
        ? [`a collection in the server (${longestEvent(gc)[2]})`, longestOf(gc)]
        : stall.length
          ? ["a server stall, no collection of 1 ms", longestOf(stall)]
          : own.length
            ? ["a stall of the load generator alone", longestOf(own)]
            : ["nothing seen", 0];
    const c = causes.get(cause) ?? { count: 0, worst: 0, longestEvent: 0 };
    c.count++;
    c.worst = Math.max(c.worst, latency);
    c.longestEvent = Math.max(c.longestEvent, event);
    causes.set(cause, c);
  }
  const longest = (events: [number, number, ...unknown[]][]) => Math.max(0, ...events.map((e) => e[1]));
  console.log(
    `answers slower than ${SPIKE_MS} ms: ${spikes.length} of ${requests} (${((100 * spikes.length) / Math.max(1, requests)).toFixed(2)} %); in the run, server collections ${server.gcs.length} (longest ${longest(server.gcs).toFixed(1)} ms), server stalls over 3 ms ${server.stalls.length} (longest ${longest(server.stalls).toFixed(1)} ms), generator stalls over 3 ms ${generatorStalls.length} (longest ${longest(generatorStalls).toFixed(1)} ms)`,
  );
  for (const [cause, c] of [...causes].sort((a, b) => b[1].count - a[1].count))
    console.log(`  ${String(c.count).padStart(5)} × ${cause.padEnd(52)} slowest ${c.worst.toFixed(1)} ms${c.longestEvent ? `, longest such event ${c.longestEvent.toFixed(1)} ms` : ""}`);
}
