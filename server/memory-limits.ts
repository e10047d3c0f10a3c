// The memory limits and runtime flags of the production server (server/runtime-flags.ts), set by
// the server itself (docs/decisions/068, 094), so that `npm start`, `node server/main.ts` in a
// container and the tests' spawn all run alike.
// Imported first by server/main.ts, before anything else loads: when the process was started
// without a limit below, it replaces itself — same pid, same stdio, same arguments — by one started
// with them (process.execve). A limit the operator set (node flag, NODE_OPTIONS, the variable) wins.
import { MALLOC_ENV, missingFlags } from "./runtime-flags.ts";

const flags = missingFlags(process.execArgv, process.env.NODE_OPTIONS);
const env = Object.entries(MALLOC_ENV).filter(([name]) => process.env[name] === undefined);
// execve replaces the process image (POSIX only; elsewhere the defaults stay and a line says so).
if (flags.length || env.length) {
  if (typeof process.execve === "function") {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, ...Object.fromEntries(env) });
  } else {
    console.warn(`Memory limits and runtime flags not set (no process.execve on ${process.platform}): start with ${[...flags, ...env.map(([k, v]) => `${k}=${v}`)].join(" ")}`);
  }
}
