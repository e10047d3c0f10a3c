// The bench's load generator in open loop: requests fall due at the rate asked for, whether it
// polls for them on every turn of its event loop (spin, on a core of its own) or on a 1 ms timer,
// every due request is sent and answered, and a job ends (a spinning loop must stop, or the
// generator never answers and never exits).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "../../../bench/harness";

let server: http.Server;
let port = 0;
let answered = 0;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    answered++;
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "2" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

type Result = { requests: number; errors: number; failed: boolean; rps: number; p50: number; p99: number; seconds: number };

/** Runs one job in a generator of its own (the job as its argument: it exits when done). */
function runJob(job: Record<string, unknown>): Promise<{ code: number | null; result: Result }> {
  const child = spawn(process.execPath, [path.join(root, "bench/load-generator.mjs"), JSON.stringify(job)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (!line) return reject(new Error(`no result from the generator:\n${out}`));
      resolve({ code, result: JSON.parse(line) as Result });
    });
  });
}

const request = (p: number) => `GET / HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\n\r\n`;

describe("the load generator in open loop", () => {
  for (const spin of [true, false]) {
    it(`sends every request due at the rate and ends the job (${spin ? "polling every turn" : "on a 1 ms timer"})`, async () => {
      const before = answered;
      const rate = 400;
      const seconds = 1;
      const { code, result } = await runJob({ port, requests: [request(port)], connections: 4, seconds, warmupMs: 200, rate, spin, expectStatus: 200, expectBodyPrefix: "{}" });
      expect(code).toBe(0);
      expect(result.failed).toBe(false);
      expect(result.errors).toBe(0);
      // Due at 400 a second: the measured window (its own length, however late its timers
      // fired) holds about that many, never many more (open loop sends what is due, not what the
      // connections could carry).
      const due = rate * result.seconds;
      expect(result.requests).toBeGreaterThan(due * 0.8);
      expect(result.requests).toBeLessThanOrEqual(due * 1.1 + 4);
      expect(answered - before).toBeGreaterThanOrEqual(result.requests);
      expect(result.p99).toBeGreaterThan(0);
    });
  }
});

/** User + system CPU time of a process so far, ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

describe("the load generator serving jobs from its input, as the bench runs it", () => {
  it("stops polling when a spinning job ends: idle afterwards, and it exits when its input closes", async () => {
    const child = spawn(process.execPath, [path.join(root, "bench/load-generator.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    const result = new Promise<string>((resolve) => child.stdout.on("data", (d) => ((out += d), out.includes("}\n") && resolve(out))));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      await jobThenIdle(child, result, exited);
    } finally {
      child.kill("SIGKILL"); // whatever failed above, no generator outlives the test
    }
  });
});

/** One spinning job over stdin, then the generator must sit idle, and exit when its input closes. */
async function jobThenIdle(child: ReturnType<typeof spawn>, result: Promise<string>, exited: Promise<number | null>) {
  child.stdin!.write(`${JSON.stringify({ port, requests: [request(port)], connections: 2, seconds: 0.3, warmupMs: 100, rate: 200, spin: true, expectStatus: 200 })}\n`);
  expect(await result).toContain('"failed":false');
  // A spinning loop left running would use about all of a core from here on.
  const before = cpuMs(child.pid!);
  const window = performance.now();
  await new Promise((r) => setTimeout(r, 600));
  const busyShare = (cpuMs(child.pid!) - before) / (performance.now() - window);
  expect(busyShare).toBeLessThan(0.25);
  child.stdin!.end();
  expect(await exited).toBe(0);
}

describe("a measurement", () => {
  it("has the server's core to itself: every other started server is stopped while it runs, and continued after", async () => {
    const { freePort, measure, startServer } = await import("../../../bench/harness");
    const code = 'require("node:http").createServer((q,s)=>s.writeHead(200,{"Content-Length":"2"}).end("{}")).listen(Number(process.env.PORT),"127.0.0.1",()=>console.log("listening on"))';
    const start = async (name: string) => {
      const p = await freePort();
      return startServer(name, ["-e", code], { ...process.env, PORT: String(p) }, p);
    };
    const measured = await start("measured");
    const other = await start("other");
    const state = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[0];
    try {
      let seenStopped = false;
      const job = measure("measured", measured, { requests: [request(measured.port)], connections: 2, seconds: 0.5, warmupMs: 100 });
      let done = false;
      void job.finally(() => (done = true));
      while (!done) {
        if (state(other.pid) === "T") seenStopped = true;
        expect(state(measured.pid)).not.toBe("T");
        await new Promise((r) => setImmediate(r));
      }
      const m = await job;
      expect(m.requests).toBeGreaterThan(0);
      expect(seenStopped).toBe(true);
      expect(state(other.pid)).not.toBe("T");
      // Continued: it answers again.
      const answer = await fetch(`${other.url}/`);
      expect(await answer.text()).toBe("{}");
    } finally {
      await measured.stop();
      await other.stop();
    }
  });
});
