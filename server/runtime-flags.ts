// The node flags and environment the production server runs with (docs/decisions/068, 094, 101): what
// server/memory-limits.ts restarts the process with when they are missing, and what the bench and
// the tests read. No side effect here, so anything may import it.
import os from "node:os";

/**
 * V8's heap. The young generation (semi-spaces) is where each request's short-lived objects live
 * and die: its size bounds the resident memory that churn holds, and too small a one means a
 * scavenge every few requests (docs/decisions/069 measures both). The old space holds what lives
 * on (the build, caches, pools): about three times what it holds after a minute of load.
 */
export const V8_LIMITS = { "--max-old-space-size": "96", "--max-semi-space-size": "2" } as const;

/**
 * glibc's fixed mmap threshold (128 KiB): an Argon2id hash takes 19 MiB outside V8's heap; with
 * the dynamic threshold, freed blocks that size stay resident in the thread's arena
 * (docs/decisions/057). Read by glibc when the process starts, hence the restart.
 */
export const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: "131072" } as const;

/**
 * AsyncLocalStorage (each request's id and language) on Node 22 and 23 is built on async hooks: a
 * hook runs for every promise made while one is active, and a request makes hundreds. The flag
 * gives those versions the context-frame implementation Node 24 has by default: a request costs
 * about a tenth less CPU and allocates less (docs/decisions/094). Given only where the running Node
 * knows it and does not already do it.
 */
export const ASYNC_CONTEXT_FRAME_FLAG = "--experimental-async-context-frame";
export function asyncContextFrameFlags(version = process.versions.node, known: ReadonlySet<string> = process.allowedNodeEnvironmentFlags): string[] {
  const major = Number(version.split(".", 1)[0]);
  return major < 24 && known.has(ASYNC_CONTEXT_FRAME_FLAG) ? [ASYNC_CONTEXT_FRAME_FLAG] : [];
}

/**
 * V8 collects on helper threads beside the main one (parallel scavenges, concurrent marking and
 * sweeping). A process that may run on one CPU only (an affinity mask, taskset, a one-CPU
 * machine) gains nothing from them: they take turns with the main thread on that CPU, and a
 * Mark-Compact's pause then waits on them — 6.7–8.1 ms at 5 500 req/s on /auth/session, against
 * 1.7 ms with every collection on the main thread (docs/decisions/101). Given only there.
 */
export const SINGLE_THREADED_GC_FLAG = "--single-threaded-gc";
export function singleCpuGcFlags(parallelism = os.availableParallelism()): string[] {
  return parallelism === 1 ? [SINGLE_THREADED_GC_FLAG] : [];
}

/**
 * Flags of V8_LIMITS (and the async context and single-CPU collection flags, where they apply)
 * that neither the command line nor NODE_OPTIONS sets ("-" and "_" alike); `--no-…` of a flag
 * counts as set.
 */
export function missingFlags(
  execArgv: readonly string[],
  nodeOptions = "",
  contextFlags: readonly string[] = asyncContextFrameFlags(),
  gcFlags: readonly string[] = singleCpuGcFlags(),
): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.split("=", 1)[0]!.replaceAll("_", "-").replace(/^--no-/, "--")));
  const limits = Object.entries(V8_LIMITS)
    .filter(([name]) => !given.has(name))
    .map(([name, value]) => `${name}=${value}`);
  const switches = [...contextFlags, ...gcFlags].filter((flag) => !given.has(flag) && !given.has(flag.replace("--experimental-", "--")));
  return [...limits, ...switches];
}
