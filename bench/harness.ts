// What every part of `npm run bench` shares: starting a server pinned to its core, driving load
// from bench/load-generator.mjs pinned to another, and reading the server's CPU time and memory
// from /proc. scripts/bench.ts composes the parts; a new part takes a BenchContext and calls
// measure() or measureFlow() with a server it started through startServer().
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { promotionIn } from "./gc-nvp";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Server on the last core, load generator on the first, when there are two or more. */
export const CORES = os.cpus().length;
export const PINNED = CORES >= 2 && spawnSync("taskset", ["-c", "0", "true"]).status === 0;
const SERVER_CORE = String(CORES - 1);
const LOAD_CORE = "0";

/**
 * The idle processes that started this one (tsx's launcher, npm, its shell) and this process's
 * helper threads at the lowest priority when pinned: they are not pinned (the two cores are the
 * server's and the generator's), and a trace of both cores (perf sched_switch, bench/gc-trace.ts)
 * found npm's process running 4–10 ms at a time on the server's core in the middle of the
 * server's stalls, and the driver's threads on the generator's. At nice 19 they run when neither
 * needs the core. Not this process's main thread: the servers and the generator it starts
 * inherit its priority, and only a privileged process can raise it again. Called by the commands
 * that measure (not on import: a test runner importing this module would lower its own workers).
 */
export function lowerDriverPriority() {
  if (!PINNED) return;
  // An ancestor is lowered only while its command line names this command ("bench" for
  // scripts/bench.ts: npm run bench, its shell, tsx's launcher), never a terminal's shell or a
  // tool that happened to start it.
  const command = path.basename(process.argv[1] ?? "", path.extname(process.argv[1] ?? ""));
  let pid = process.pid;
  for (let depth = 0; depth < 4 && pid > 1; depth++) {
    let parent = 0;
    try {
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (depth > 0 && (!command || !commandLine.includes(command))) return;
      parent = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      // setpriority acts on one thread on Linux: each task of the process in turn.
      for (const tid of readdirSync(`/proc/${pid}/task`)) if (Number(tid) !== process.pid) os.setPriority(Number(tid), 19);
    } catch {
      // gone, or not ours: leave it and the rest of the chain
      return;
    }
    pid = parent;
  }
}
const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

export type Server = {
  name: string;
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
  env: NodeJS.ProcessEnv;
  /** Milliseconds from spawn to the ready line. */
  startMs: number;
  /** Server CPU time (µs) spent by then: the start's cost, whatever else the machine runs. */
  startCpuUs: number;
  output: () => string;
  stop: () => Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `node <args>` (or `program <args>`, e.g. npm; pinned to the server core) and waits for
 * `ready` on its output. The Server's pid is the node process that serves (under npm, its child).
 */
export async function startServer(name: string, args: string[], env: NodeJS.ProcessEnv, port: number, ready = "listening on", program = process.execPath): Promise<Server> {
  const started = performance.now();
  const command = PINNED ? "taskset" : program;
  const argv = PINNED ? ["-c", SERVER_CORE, program, ...args] : args;
  const child = spawn(command, argv, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready in 30 s:\n${out}`)), 30_000);
    const check = () => {
      if (out.includes(ready)) {
        clearTimeout(timer);
        child.stdout!.off("data", check);
        resolve();
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited ${code}:\n${out}`));
    });
  });
  const startMs = performance.now() - started;
  const pid = nodeProcessUnder(child.pid!);
  const startCpuUs = cpuMicros(pid);
  child.removeAllListeners("exit");
  const server: Server = {
    name,
    url: `http://127.0.0.1:${port}`,
    port,
    pid,
    child,
    env,
    startMs,
    startCpuUs,
    output: () => out,
    stop: async () => {
      started_.delete(server);
      signal(pidsOf(server), "SIGCONT");
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      // Under npm the server is a grandchild: told directly, as a supervisor would (it may be gone).
      if (pid !== child.pid) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // Gone already.
        }
      }
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
      if (pid !== child.pid) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
    },
  };
  started_.add(server);
  return server;
}

/**
 * Every server started and not yet stopped. While one is measured the others are stopped
 * (SIGSTOP, then SIGCONT): they share its core, and an idle server is not idle — its timers
 * (the revocation poll every 2 s, a database query), V8's memory reducer collecting after its own
 * load ended, its compiler finishing — and each wake-up preempted the measured server, the
 * scenario measured right after another's load the most.
 */
const started_ = new Set<Server>();

/** A server's node process and, under npm, the npm process that started it. */
function pidsOf(server: Server): number[] {
  return [server.pid, server.child.pid!];
}

function signal(pids: number[], sig: NodeJS.Signals) {
  for (const pid of new Set(pids)) {
    try {
      process.kill(pid, sig);
    } catch {
      // Gone already.
    }
  }
}

/**
 * A stopped server ignores SIGTERM until continued: should this process end while others are
 * stopped (an exception, Ctrl-C, a CI timeout's SIGTERM), they are continued first.
 */
let continueOnExit = false;
function continueAllOnExit() {
  if (continueOnExit) return;
  continueOnExit = true;
  const continueAll = () => signal([...started_].flatMap(pidsOf), "SIGCONT");
  process.once("exit", continueAll);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => {
      continueAll();
      process.kill(process.pid, sig); // once: the default action now, as without this handler
    });
  }
}

/** Runs `fn` with every other started server stopped. */
async function alone<T>(server: Server, fn: () => Promise<T>): Promise<T> {
  continueAllOnExit();
  const others = [...started_].filter((s) => s !== server && s.pid !== server.pid).flatMap(pidsOf);
  signal(others, "SIGSTOP");
  try {
    return await fn();
  } finally {
    signal(others, "SIGCONT");
  }
}

/** User + system CPU time of a process so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
}

/**
 * Time the hypervisor ran something else while the server's core wanted to run, in ms (steal,
 * /proc/stat: that core's line when pinned, all CPUs' else; counted in ticks of 10 ms). A latency
 * figure whose window had some was partly the machine's.
 */
export function stealMs(): number {
  const line = PINNED ? `cpu${SERVER_CORE} ` : "cpu ";
  const cpu = (readFileSync("/proc/stat", "utf8").split("\n").find((l) => l.startsWith(line)) ?? "").split(/\s+/);
  return (Number(cpu[8] ?? 0) * 1000) / CLK_TCK;
}

/** Resident memory (VmRSS) and its peak (VmHWM) in MB. */
export function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

export const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

/** One request with Node's client (setup and the sign-in flow; not for peak load). */
export function request(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? "GET", headers: init.headers, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

export const cookiesOf = (h: http.IncomingHttpHeaders) => (h["set-cookie"] ?? []).map((c) => c.split(";")[0]!);

/** A raw HTTP/1.1 GET for the load generator. */
export function rawGet(server: Server, target: string, cookie?: string): string {
  return `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n${cookie ? `Cookie: ${cookie}\r\n` : ""}\r\n`;
}

/** A raw GET of `target` carrying an OAuth access token (a bearer-protected resource: GET /api/me). */
export function rawGetBearer(server: Server, target: string, token: string): string {
  return `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
}

/** A raw GET of `target` with the cookie it reads: the session for /auth/session, the CSRF cookie for /auth/csrf, none otherwise. */
export function rawGetSignedIn(server: Server, target: string, cookies: { session: string; csrfCookie: string }): string {
  return rawGet(server, target, target === "/auth/session" ? cookies.session : target === "/auth/csrf" ? cookies.csrfCookie : undefined);
}

export type Measurement = {
  name: string;
  server: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
  /** Server CPU time per request, µs (user + system, /proc/<pid>/stat). */
  cpuUs: number;
  rssMb: number;
  /** Runs at a rate: the rate asked for (open loop, or closed loop paced per connection). */
  rate?: number;
  /** Seconds measured, server CPU in total (µs), latency histogram ([µs, count]) or raw latencies (ms): to merge runs. */
  seconds: number;
  cpuTotalUs: number;
  hist?: [number, number][];
  latencies?: number[];
  /** The load generator's own event-loop delay while measuring (p99, max; ms): what of the latency can be its own. */
  generatorDelayMs?: { p99: number; max: number };
  /** With spikeMs: the slow answers [due (epoch ms), latency ms] and the generator's own stalls [from (epoch ms), ms]. */
  spikes?: [number, number][];
  generatorStalls?: [number, number][];
  /** Steal time on the server's core while measuring, ms (stealMs). */
  stealMs?: number;
};

function percentileOf(hist: [number, number][], total: number, p: number): number {
  const target = Math.max(1, Math.ceil(total * p));
  let seen = 0;
  for (const [us, count] of hist) {
    seen += count;
    if (seen >= target) return us / 1000;
  }
  return NaN;
}

/**
 * One figure from several runs of one scenario (interleaved with the other scenarios, so that
 * whatever else the machine runs weighs on each scenario alike): requests and seconds, CPU and
 * latencies added up.
 */
export function combine(runs: Measurement[]): Measurement {
  const first = runs[0]!;
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const cpuTotalUs = runs.reduce((a, r) => a + r.cpuTotalUs, 0);
  let p50 = NaN;
  let p99 = NaN;
  if (runs.every((r) => r.hist)) {
    const merged = new Map<number, number>();
    for (const r of runs) for (const [us, n] of r.hist!) merged.set(us, (merged.get(us) ?? 0) + n);
    const hist = [...merged].sort((a, b) => a[0] - b[0]);
    p50 = percentileOf(hist, requests, 0.5);
    p99 = percentileOf(hist, requests, 0.99);
  } else if (runs.every((r) => r.latencies)) {
    const all = runs.flatMap((r) => r.latencies!).sort((a, b) => a - b);
    p50 = all[Math.max(0, Math.ceil(all.length * 0.5) - 1)] ?? NaN;
    p99 = all[Math.max(0, Math.ceil(all.length * 0.99) - 1)] ?? NaN;
  }
  return {
    name: first.name,
    server: first.server,
    rps: requests / seconds,
    p50,
    p99,
    errors: runs.reduce((a, r) => a + r.errors, 0),
    requests,
    cpuUs: cpuTotalUs / Math.max(1, requests),
    rssMb: runs.at(-1)!.rssMb,
    seconds,
    cpuTotalUs,
    stealMs: runs.reduce((a, r) => a + (r.stealMs ?? 0), 0),
    ...(runs.every((r) => r.generatorDelayMs)
      ? { generatorDelayMs: { p99: Math.max(...runs.map((r) => r.generatorDelayMs!.p99)), max: Math.max(...runs.map((r) => r.generatorDelayMs!.max)) } }
      : {}),
  };
}

export type LoadOptions = {
  requests: string[];
  connections: number;
  seconds: number;
  warmupMs?: number;
  rate?: number;
  /** With rate: closed loop (each connection waits for its answer, then for its next slot) instead of open. */
  closedLoop?: boolean;
  expectStatus?: number;
  expectBodyPrefix?: string;
  /** Record every answer slower than this (ms) with when it was due, and the generator's own stalls (bench/gc-trace.ts). */
  spikeMs?: number;
};

type GeneratorResult = {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  ownDelayMs: { p99: number; max: number };
  hist: [number, number][];
  spikes?: [number, number][];
  ownStalls?: [number, number][];
};

/**
 * The load generator (bench/load-generator.mjs on its own core), one process for every
 * measurement of this process, started on first use: a generator started afresh each time spends
 * its first second compiling, and its lateness read as the server's latency. Held (ref'd) only
 * while a job runs, so it never keeps a finished command alive; it ends with this process's stdin pipe.
 */
let generator: { child: ChildProcess; onLine: (line: string) => void; onExit: (code: number | null) => void } | null = null;
let generatorQueue: Promise<unknown> = Promise.resolve();

function loadGenerator() {
  if (generator && generator.child.exitCode === null && generator.child.signalCode === null) return generator;
  const script = path.join(root, "bench/load-generator.mjs");
  const child = PINNED
    ? // On its one core, collection on its main thread (as the server does there: docs/decisions/101).
      spawn("taskset", ["-c", LOAD_CORE, process.execPath, "--single-threaded-gc", script], { stdio: ["pipe", "pipe", "inherit"] })
    : spawn(process.execPath, [script], { stdio: ["pipe", "pipe", "inherit"] });
  const current = { child, onLine: (_: string) => {}, onExit: (_: number | null) => {} };
  readline.createInterface({ input: child.stdout! }).on("line", (line) => current.onLine(line));
  child.once("exit", (code) => current.onExit(code));
  generator = current;
  return current;
}

function holdGenerator(g: NonNullable<typeof generator>, held: boolean) {
  for (const handle of [g.child, g.child.stdin, g.child.stdout] as { ref?: () => void; unref?: () => void }[]) (held ? handle.ref : handle.unref)?.call(handle);
}

/** Drives `server` with the load generator (on its own core) and reads the server's CPU over the measured window. */
export async function measure(name: string, server: Server, options: LoadOptions): Promise<Measurement> {
  const job = generatorQueue.then(() => alone(server, () => runJob(server, options)));
  generatorQueue = job.catch(() => {});
  const { result, cpuStart, cpuEnd, stolenMs } = await job;
  return {
    name,
    server: server.name,
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    errors: result.errors,
    requests: result.requests,
    cpuUs: result.requests ? (cpuEnd - cpuStart) / result.requests : NaN,
    rssMb: memoryMb(server.pid).rss,
    ...(options.rate ? { rate: options.rate } : {}),
    seconds: result.seconds,
    cpuTotalUs: cpuEnd - cpuStart,
    hist: result.hist,
    generatorDelayMs: result.ownDelayMs,
    stealMs: stolenMs,
    ...(result.spikes ? { spikes: result.spikes, generatorStalls: result.ownStalls ?? [] } : {}),
  };
}

async function runJob(server: Server, options: LoadOptions): Promise<{ result: GeneratorResult; cpuStart: number; cpuEnd: number; stolenMs: number }> {
  const g = loadGenerator();
  holdGenerator(g, true);
  try {
    let cpuStart = 0;
    let stealStart = 0;
    const result = await new Promise<GeneratorResult>((resolve, reject) => {
      g.onLine = (line) => {
        if (line === "measuring") {
          cpuStart = cpuMicros(server.pid);
          stealStart = stealMs();
        }
        else if (line.startsWith("{")) resolve(JSON.parse(line) as GeneratorResult);
      };
      g.onExit = (code) => reject(new Error(`load generator exited ${code}`));
      // Open loop spins on its own core (bench/load-generator.mjs); unpinned it would take the server's.
      g.child.stdin!.write(`${JSON.stringify({ port: server.port, warmupMs: 500, expectStatus: 200, spin: PINNED, ...options })}\n`);
    });
    return { result, cpuStart, cpuEnd: cpuMicros(server.pid), stolenMs: stealMs() - stealStart };
  } finally {
    holdGenerator(g, false);
  }
}

/** Closed-loop load of a multi-request flow (e.g. a sign-in) from this process, with the server's CPU per flow. */
export function measureFlow(name: string, server: Server, connections: number, seconds: number, once: () => Promise<boolean>, warmupMs = 1_000): Promise<Measurement> {
  return alone(server, () => runFlow(name, server, connections, seconds, once, warmupMs));
}

async function runFlow(name: string, server: Server, connections: number, seconds: number, once: () => Promise<boolean>, warmupMs: number): Promise<Measurement> {
  const latencies: number[] = [];
  let errors = 0;
  const warmEnd = performance.now() + warmupMs;
  const end = warmEnd + seconds * 1_000;
  let cpuStart = NaN;
  let measuredFrom = warmEnd;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        if (t >= warmEnd && Number.isNaN(cpuStart)) {
          cpuStart = cpuMicros(server.pid);
          measuredFrom = t;
        }
        const ok = await once().catch(() => false);
        if (t >= warmEnd) {
          latencies.push(performance.now() - t);
          if (!ok) errors++;
        }
      }
    }),
  );
  const cpuEnd = cpuMicros(server.pid);
  const elapsed = (performance.now() - measuredFrom) / 1_000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * p) - 1)] ?? NaN;
  return {
    name,
    server: server.name,
    rps: latencies.length / elapsed,
    p50: pct(0.5),
    p99: pct(0.99),
    errors,
    requests: latencies.length,
    cpuUs: (cpuEnd - cpuStart) / Math.max(1, latencies.length),
    rssMb: memoryMb(server.pid).rss,
    seconds: elapsed,
    cpuTotalUs: cpuEnd - cpuStart,
    latencies,
  };
}

/** The machine's load while the bench ran (other work on the cores skews absolute figures, not same-run ratios). */
export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

/** Sends `raw` `count` times, one after the other, on one keep-alive connection; resolves when every answer has arrived. */
export function sendSequentially(server: Server, raw: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: server.port, host: "127.0.0.1", noDelay: true });
    const bytes = Buffer.from(raw, "latin1");
    let left = count;
    let buf: Buffer = Buffer.alloc(0);
    socket.on("error", reject);
    socket.on("close", () => left > 0 && reject(new Error(`connection closed with ${left} answers to come`)));
    socket.on("connect", () => socket.write(bytes));
    socket.on("data", (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        let length: number;
        try {
          length = responseLength(buf);
        } catch (error) {
          socket.destroy();
          return reject(error);
        }
        if (length < 0) return;
        buf = buf.subarray(length);
        if (--left === 0) {
          socket.destroy();
          return resolve();
        }
        socket.write(bytes);
      }
    });
  });
}

/**
 * The length of the first whole HTTP/1.1 answer in `buf` (head and body, framed by Content-Length
 * or chunked), or -1 while it is still arriving. A chunked answer read as a bodiless one would
 * count its closing chunk as a second answer and send two requests for one (ADR 099).
 */
export function responseLength(buf: Buffer): number {
  const head = buf.indexOf("\r\n\r\n");
  if (head < 0) return -1;
  const headText = buf.toString("latin1", 0, head);
  // Transfer-Encoding wins over Content-Length (RFC 9112 §6.3).
  const declared = /\r\ncontent-length: *(\d+)/i.exec(headText);
  if (!/\r\ntransfer-encoding: *chunked/i.test(headText)) {
    const end = head + 4 + Number(declared?.[1] ?? 0);
    return buf.length < end ? -1 : end;
  }
  // Chunks: a size line in hex, that many bytes, CRLF; the last has size 0 (no trailers are sent).
  let at = head + 4;
  for (;;) {
    const lineEnd = buf.indexOf("\r\n", at);
    if (lineEnd < 0) return -1;
    const size = Number.parseInt(buf.toString("latin1", at, lineEnd), 16);
    if (!Number.isInteger(size) || size < 0) throw new Error(`not a chunk size: ${JSON.stringify(buf.toString("latin1", at, lineEnd))}`);
    const end = lineEnd + 2 + size + 2;
    if (buf.length < end) return -1;
    if (size === 0) return end;
    at = end;
  }
}

/**
 * Sends SIGUSR2 to `server`, whose preloaded probe (bench/alloc-probe.mjs, sampler.mjs,
 * stall-probe.mjs) answers with a line starting `prefix`; waits up to `timeoutMs` for it and
 * gives the rest of that line and where it ended in the server's output.
 */
export async function signalProbe(server: Server, prefix: string, timeoutMs = 30_000): Promise<{ rest: string; at: number }> {
  const from = server.output().length;
  const line = new RegExp(`${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(.*)\n`);
  process.kill(server.pid, "SIGUSR2");
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const m = line.exec(server.output().slice(from));
    if (m) return { rest: m[1]!.trim(), at: from + m.index + m[0].length };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${server.name}: no "${prefix}" line within ${timeoutMs} ms of SIGUSR2`);
}

/** The heap figures bench/alloc-probe.mjs writes on SIGUSR2. */
async function probe(server: Server): Promise<{ usedHeap: number; external: number; at: number }> {
  const { rest, at } = await signalProbe(server, "alloc-probe ");
  return { ...JSON.parse(rest), at };
}

/** Node flags for a server measured by measureAllocation: the probe and a young generation no run of `count` requests fills. */
export const ALLOCATION_FLAGS = ["--import", path.join(root, "bench/alloc-probe.mjs"), "--trace-gc", "--min-semi-space-size=256", "--max-semi-space-size=256", "--max-old-space-size=1024"];

/**
 * JavaScript heap allocated per request (bytes) by `raw` on a server started with ALLOCATION_FLAGS:
 * the growth of the heap over `count` requests in a row with no collection in between (checked),
 * after a warm-up long enough for the optimising compiler to settle; the median of three runs.
 */
export async function measureAllocation(server: Server, raw: string, count = 2_000): Promise<{ bytesPerRequest: number; externalPerRequest: number }> {
  await sendSequentially(server, raw, 3_000);
  const runs: { bytesPerRequest: number; externalPerRequest: number }[] = [];
  for (let attempt = 0; attempt < 8 && runs.length < 3; attempt++) {
    const a = await probe(server);
    const started = performance.now();
    await sendSequentially(server, raw, count);
    const took = performance.now() - started;
    const b = await probe(server);
    // What the process allocates meanwhile without requests (timers: the revocation list's poll,
    // the cleanup schedule), over as long a quiet window, is not the requests' doing.
    await new Promise((r) => setTimeout(r, took));
    const c = await probe(server);
    if (/Scavenge|Mark-Compact|Mark-sweep/i.test(server.output().slice(a.at, c.at))) continue;
    const quiet = c.usedHeap - b.usedHeap;
    runs.push({ bytesPerRequest: (b.usedHeap - a.usedHeap - quiet) / count, externalPerRequest: (b.external - a.external) / count });
  }
  if (runs.length < 3) throw new Error(`${server.name}: collections ran during the allocation measurements`);
  return runs.sort((x, y) => x.bytesPerRequest - y.bytesPerRequest)[1]!;
}

/**
 * The environment a benchmarked production server starts with: loopback on `port`, its own data
 * folder and secret, `env` on top; the shell's DATABASE_URL only when `env` names one.
 */
export function benchServerEnv(port: number, dataDir: string, secret: string, env: Record<string, string>): NodeJS.ProcessEnv {
  const full: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTH_URL: `http://127.0.0.1:${port}`,
    AUTH_SECRET: secret,
    VESTIBULE_DATA_DIR: dataDir,
    ...env,
  };
  if (!env.DATABASE_URL) delete full.DATABASE_URL;
  return full;
}

/** The pid of the node process under `pid` (itself, or the first node descendant: `npm start` runs node under npm and a shell). */
export function nodeProcessUnder(pid: number): number {
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    let comm = "";
    try {
      comm = readFileSync(`/proc/${p}/comm`, "utf8").trim();
    } catch {
      continue;
    }
    if (comm === "node" || comm.startsWith("node")) {
      // npm itself runs on node: the server is the node process whose command line names server/main.ts.
      const cmdline = readFileSync(`/proc/${p}/cmdline`, "utf8");
      if (cmdline.includes("server/main.ts")) return p;
    }
    for (const task of readdirSync(`/proc/${p}/task`)) {
      const children = readFileSync(`/proc/${p}/task/${task}/children`, "utf8").trim();
      if (children) queue.push(...children.split(/\s+/).map(Number));
    }
  }
  return pid;
}

/** The node flag measurePromotion reads: one line of name=value pairs per collection. */
export const PROMOTION_FLAGS = ["--trace-gc-nvp"];

/**
 * JavaScript heap moved from the young generation to the old one per request (bytes) by `raw` under
 * load (`connections` at full speed) on a server started with PROMOTION_FLAGS and the
 * production limits: the `promoted=` of every young collection in the measured window, summed.
 * A request lasts about a millisecond and young collections come every few, so little of a request
 * should reach the old generation; what does is held from something that lives on (a weak table
 * or transition tree of the old generation: docs/decisions/096), and the Mark-Compacts then have to find it.
 * heapGrowthPerRequest: how much the heap grew per request from one young collection to the next,
 * which also counts what is allocated in the old generation directly (ADR 100).
 */
export async function measurePromotion(
  server: Server,
  raw: string,
  seconds = 3,
  connections = 16,
): Promise<{ bytesPerRequest: number; heapGrowthPerRequest: number; youngCollections: number; oldCollections: number }> {
  await measure("warm-up", server, { requests: [raw], connections, seconds: 1 });
  const from = server.output().length;
  const result = await measure("promotion", server, { requests: [raw], connections, seconds });
  const { promotedBytes, heapGrowthBytes, youngCollections, oldCollections } = promotionIn(server.output().slice(from));
  return { bytesPerRequest: promotedBytes / result.requests, heapGrowthPerRequest: heapGrowthBytes / result.requests, youngCollections, oldCollections };
}

/**
 * Adds the user (npm run user:add's script against `server`'s database) and signs them in with the
 * password: the session cookie and the CSRF cookie, for the profiling tools' requests.
 */
export async function addUserAndSignIn(server: Server, email: string, password: string): Promise<{ session: string; csrfCookie: string }> {
  const add = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/user-add.ts"), "--email", email, "--password", password, "--name", "Profile"], { env: server.env, encoding: "utf8" });
  if (add.status !== 0) throw new Error(add.stderr);
  const csrf = await request(`${server.url}/auth/csrf`);
  const csrfCookie = cookiesOf(csrf.headers).join("; ");
  const signIn = await request(`${server.url}/auth/callback/credentials`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: csrfCookie },
    body: new URLSearchParams({ csrfToken: JSON.parse(csrf.body).csrfToken, email, password }).toString(),
  });
  const session = cookiesOf(signIn.headers).find((c) => c.startsWith("authjs.session-token="));
  if (!session) throw new Error(`sign-in failed: ${signIn.status}`);
  return { session, csrfCookie };
}
