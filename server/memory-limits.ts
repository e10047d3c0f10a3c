// The memory limits of the production server, set by the server itself (docs/decisions/068), so
// that `npm start`, `node server/main.ts` in a container and the tests' spawn all run alike.
// Imported first by server/main.ts, before anything else loads: when the process was started
// without a limit below, it replaces itself — same pid, same stdio, same arguments — by one started
// with them (process.execve). A limit the operator set (node flag, NODE_OPTIONS, the variable) wins.

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

/** Flags in V8_LIMITS that neither the command line nor NODE_OPTIONS sets ("-" and "_" alike). */
export function missingFlags(execArgv: readonly string[], nodeOptions = ""): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.split("=", 1)[0]!.replaceAll("_", "-")));
  return Object.entries(V8_LIMITS)
    .filter(([name]) => !given.has(name))
    .map(([name, value]) => `${name}=${value}`);
}

const flags = missingFlags(process.execArgv, process.env.NODE_OPTIONS);
const env = Object.entries(MALLOC_ENV).filter(([name]) => process.env[name] === undefined);
// execve replaces the process image (POSIX only; elsewhere the defaults stay and a line says so).
if (flags.length || env.length) {
  if (typeof process.execve === "function") {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, ...Object.fromEntries(env) });
  } else {
    console.warn(`Memory limits not set (no process.execve on ${process.platform}): start with ${[...flags, ...env.map(([k, v]) => `${k}=${v}`)].join(" ")}`);
  }
}
