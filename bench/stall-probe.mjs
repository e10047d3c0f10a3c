// Preloaded (`node --import ./bench/stall-probe.mjs`) by bench/gc-trace.ts: the server records,
// on the machine's clock (epoch ms, so they line up with the load generator's), every garbage
// collection pause (PerformanceObserver "gc": start, duration, kind) and every stall of its event
// loop longer than STALL_MS (a 1 ms timer that fired late: when, and by how much). On SIGUSR2 it
// writes them as one line to stdout and forgets them. Nothing of this runs in production.
import { constants, PerformanceObserver, performance } from "node:perf_hooks";

const STALL_MS = 3;
const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak callbacks",
};
const epoch = (t) => performance.timeOrigin + t;
let gcs = [];
let stalls = [];

new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push([epoch(e.startTime), e.duration, KINDS[e.detail?.kind] ?? String(e.detail?.kind)]);
}).observe({ entryTypes: ["gc"] });

let last = performance.now();
setInterval(() => {
  const now = performance.now();
  if (now - last > 1 + STALL_MS) stalls.push([epoch(last + 1), now - last - 1]);
  last = now;
}, 1).unref();

process.on("SIGUSR2", () => {
  process.stdout.write(`stall-probe ${JSON.stringify({ gcs, stalls })}\n`);
  gcs = [];
  stalls = [];
});
