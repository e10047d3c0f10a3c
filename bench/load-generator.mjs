// The load generator of `npm run bench`, run as its own process (pinned to its own core by
// bench/harness.ts) so that it never competes with the server it measures. Node's http client
// tops out well below what a bare node:http server answers, which would flatten every ratio;
// this one writes pre-built request bytes on keep-alive sockets and reads only the status line
// and the framing of each answer.
//
// One process serves every measurement of a run, one job at a time: a generator started afresh
// for each spent its first second compiling and growing its heap, sending up to 27 ms late, and
// that lateness was counted as the server's (open loop counts from when a request was due) —
// it made bare node:http's p99 at half rate read 5–66 ms. Its first job also warms it for
// FIRST_JOB_WARMUP_MS at least.
//
// Jobs: one JSON line each on stdin (or a single job as the first argument) — { port, requests:
// [raw HTTP/1.1 request text, …] (used in turn), connections, seconds, warmupMs, rate?
// (requests/s in total: open loop, latency counted from each request's scheduled time),
// closedLoop? (with rate: each connection sends its next request at its own share of the rate
// but never before its answer is back, latency counted from the send), expectStatus,
// expectBodyPrefix?, spin? (open loop: poll for due requests on every turn of the event loop
// instead of a 1 ms timer; only for a generator with a core of its own), spikeMs? (every answer
// slower than this, with when it was due, and the generator's own stalls, on the machine's clock:
// for bench/gc-trace.ts) }.
// Output per job: the line "measuring" when its warm-up ends, then one JSON line with the
// results, among them `ownDelayMs`: the generator's own event-loop delay while measuring (p99,
// max) — how much of a latency figure can be the generator's rather than the server's.
import { readdirSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import readline from "node:readline";

// On a core of its own, V8's helper threads (compilation) only take turns with the main thread
// that sends and times the requests: they run at the lowest priority, in the main thread's idle
// time. setpriority acts on one thread on Linux; the main thread's id is the process id.
if (os.availableParallelism() === 1) {
  for (const tid of readdirSync("/proc/self/task")) if (Number(tid) !== process.pid) os.setPriority(Number(tid), 19);
}

const HIST_US = 1_000_000; // 1 µs buckets up to 1 s, then one overflow bucket
const hist = new Uint32Array(HIST_US + 1);
const FIRST_JOB_WARMUP_MS = 1_500;
let jobsRun = 0;

/** Runs one job; writes "measuring" at the end of its warm-up and resolves with its results. */
function run(opts) {
  const requests = opts.requests.map((r) => Buffer.from(r, "latin1"));
  const expectPrefix = opts.expectBodyPrefix ? Buffer.from(opts.expectBodyPrefix) : null;
  hist.fill(0);
  let counted = 0;
  let errors = 0;
  let failed = false;
  let measuring = false;
  let stopped = false;
  let next = 0;

  const warmupMs = jobsRun++ === 0 ? Math.max(opts.warmupMs, FIRST_JOB_WARMUP_MS) : opts.warmupMs;
  const start = performance.now();
  let measureStart = start + warmupMs;
  // The generator's own event-loop delay while measuring: the part of any latency that is its own.
  const ownDelay = monitorEventLoopDelay({ resolution: 1 });

  // Open loop: requests become due at a fixed rate; an idle connection takes the oldest due one.
  // Closed loop at a rate: each connection paces itself at rate / connections.
  const paced = Boolean(opts.rate && opts.closedLoop);
  const interval = opts.rate && !paced ? 1000 / opts.rate : 0;
  const connectionInterval = paced ? (1000 * opts.connections) / opts.rate : 0;
  let nextDue = start;
  const idle = [];
  const sockets = [];

  // With spikeMs: every answer slower than that, as [when it was due (epoch ms), latency ms].
  const spikes = opts.spikeMs ? [] : null;
  const ownStalls = opts.spikeMs ? [] : null;

  function record(latencyMs, ok, due) {
    if (!measuring) return;
    if (spikes && latencyMs > opts.spikeMs) spikes.push([performance.timeOrigin + due, latencyMs]);
    const us = Math.min(HIST_US, Math.round(latencyMs * 1000));
    hist[us]++;
    counted++;
    if (!ok) errors++;
  }

  /** The latency histogram's non-empty buckets, [µs, count], so runs can be merged. */
  function buckets() {
    const out = [];
    for (let us = 0; us <= HIST_US; us++) if (hist[us]) out.push([us, hist[us]]);
    return out;
  }

  function percentile(p) {
    const target = Math.max(1, Math.ceil(counted * p));
    let seen = 0;
    for (let us = 0; us <= HIST_US; us++) {
      seen += hist[us];
      if (seen >= target) return us / 1000;
    }
    return NaN;
  }

  function connection() {
    const socket = net.connect({ port: opts.port, host: "127.0.0.1", noDelay: true });
    sockets.push(socket);
    let buf = Buffer.alloc(0);
    let sentAt = 0;
    let slot = 0;
    const self = { send };

    function send(scheduledAt) {
      if (stopped) return;
      sentAt = scheduledAt ?? performance.now();
      socket.write(requests[next++ % requests.length]);
    }

    // Closed loop at a rate: the next slot of this connection, or at once when it is past.
    function sendPaced(now) {
      slot = Math.max(slot + connectionInterval, now);
      const wait = slot - now;
      if (wait < 0.5) send();
      else setTimeout(send, wait);
    }

    // Parses one whole answer from buf; returns [bytes used, ok] or null when incomplete.
    function parse() {
      const head = buf.indexOf("\r\n\r\n");
      if (head < 0) return null;
      const status = Number(buf.toString("latin1", 9, 12));
      const headers = buf.toString("latin1", 0, head).toLowerCase();
      const bodyStart = head + 4;
      const cl = /\r\ncontent-length: *(\d+)/.exec(headers);
      let bodyEnd;
      let firstBody;
      if (opts.head || status === 204 || status === 304) {
        bodyEnd = bodyStart;
        firstBody = Buffer.alloc(0);
      } else if (cl) {
        bodyEnd = bodyStart + Number(cl[1]);
        if (buf.length < bodyEnd) return null;
        firstBody = buf.subarray(bodyStart, bodyEnd);
      } else if (headers.includes("transfer-encoding: chunked")) {
        let at = bodyStart;
        firstBody = null;
        for (;;) {
          const lineEnd = buf.indexOf("\r\n", at);
          if (lineEnd < 0) return null;
          const size = parseInt(buf.toString("latin1", at, lineEnd), 16);
          if (size === 0) {
            if (buf.length < lineEnd + 4) return null;
            bodyEnd = lineEnd + 4;
            break;
          }
          if (buf.length < lineEnd + 2 + size + 2) return null;
          firstBody ??= buf.subarray(lineEnd + 2, lineEnd + 2 + size);
          at = lineEnd + 2 + size + 2;
        }
        firstBody ??= Buffer.alloc(0);
      } else {
        bodyEnd = bodyStart;
        firstBody = Buffer.alloc(0);
      }
      let ok = status === opts.expectStatus;
      if (ok && expectPrefix) ok = firstBody.subarray(0, expectPrefix.length).equals(expectPrefix);
      return [bodyEnd, ok];
    }

    socket.on("data", (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        const parsed = parse();
        if (!parsed) return;
        buf = buf.subarray(parsed[0]);
        const now = performance.now();
        record(now - sentAt, parsed[1], sentAt);
        if (stopped) return socket.destroy();
        if (interval) dispatch(self, now);
        else if (paced) sendPaced(now);
        else send();
      }
    });
    socket.on("error", () => {
      if (!stopped) {
        errors++;
        failed = true;
      }
    });
    socket.on("connect", () => {
      if (interval) return dispatch(self, performance.now());
      // Paced connections start spread over one interval, not all at once.
      if (paced) return setTimeout(() => ((slot = performance.now()), send()), Math.random() * connectionInterval);
      send();
    });
    return self;
  }

  function dispatch(conn, now) {
    if (nextDue <= now) {
      const due = nextDue;
      nextDue += interval;
      conn.send(due);
    } else idle.push(conn);
  }

  for (let i = 0; i < opts.connections; i++) connection();
  let tick;
  if (interval) {
    // Hands due requests to idle connections between answers: on every turn of the event loop
    // when the generator has a core of its own (spin), else on a 1 ms timer. The timer sent
    // requests in bursts, up to a millisecond after they were due, and that lateness was counted
    // as the server's; and while the generator slept in epoll between ticks, every answer the
    // server wrote had to wake it across cores — a cost the server's write paid (13 % of its
    // CPU at 5 900 req/s, perf: sock_def_readable) that a generator keeping up never asks for.
    let lastTick = performance.now();
    const onTick = () => {
      const now = performance.now();
      // The generator's own stalls (the tick came late), on the machine's clock, with spikeMs.
      if (ownStalls && measuring && now - lastTick > 4) ownStalls.push([performance.timeOrigin + lastTick + 1, now - lastTick - 1]);
      lastTick = now;
      while (idle.length && nextDue <= now) dispatch(idle.shift(), now);
    };
    if (opts.spin) {
      const spin = () => {
        if (stopped) return;
        onTick();
        tick = setImmediate(spin);
      };
      tick = setImmediate(spin);
    } else tick = setInterval(onTick, 1);
  }

  return new Promise((resolve) => {
    setTimeout(() => {
      measuring = true;
      measureStart = performance.now();
      ownDelay.enable();
      process.stdout.write("measuring\n");
    }, warmupMs);
    setTimeout(
      () => {
        stopped = true;
        measuring = false;
        ownDelay.disable();
        if (opts.spin) clearImmediate(tick);
        else clearInterval(tick);
        for (const socket of sockets) socket.destroy();
        const elapsed = (performance.now() - measureStart) / 1000;
        const ms = (ns) => Math.round(ns / 1e4) / 100;
        resolve({
          requests: counted,
          errors,
          failed,
          seconds: elapsed,
          rps: counted / elapsed,
          p50: percentile(0.5),
          p99: percentile(0.99),
          // The generator's own event-loop delay while measuring, by a 1 ms timer (about 1.1 ms when idle).
          ownDelayMs: { p99: ms(ownDelay.percentile(99)), max: ms(ownDelay.max) },
          hist: buckets(),
          ...(spikes ? { spikes, ownStalls } : {}),
        });
      },
      warmupMs + opts.seconds * 1000,
    );
  });
}

const write = (result) => new Promise((resolve) => process.stdout.write(`${JSON.stringify(result)}\n`, resolve));

if (process.argv[2]) {
  const result = await run(JSON.parse(process.argv[2]));
  await write(result);
  process.exit(result.failed ? 1 : 0);
} else {
  // One job at a time: the next line is read once the previous job's answer is written.
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim()) await write(await run(JSON.parse(line)));
  }
}
