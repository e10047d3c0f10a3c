// How an instance is really started and stopped (issue 31, docs/decisions/106): by the command line
// of deploy/systemd/vestibule@.service (read from the shipped file), by `npm start`, and by
// `npm start` as PID 1 of a container. systemd (KillMode=mixed) and `docker stop` send SIGTERM to
// the main process only, never to its process group, so that is all these tests do: the process
// must drain (/readyz 503, `shutdown-started`), finish a request in flight, exit 0 and leave
// nothing behind on the port. Also: an idle stop is prompt, the unit's readiness check never
// passes for another process on the port, and a start during a database outage waits for it.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/browser";
import { DatabaseRelay } from "../support/db-relay";
import { DEPLOY_DIR, deployEnv } from "../support/deploy";
import { ADMIN_URL, databaseUrl, runDatabasePrefix } from "../support/postgres";
import { postgresUnreachable } from "../support/postgres-required";
import { openSocket, rawRequest } from "../support/raw-http";
import { received, refused, slowSignIn } from "../support/stop-signal";
import { waitUntil } from "../support/wait";

const unavailable = await postgresUnreachable("deploy stop tests");
const root = path.resolve(DEPLOY_DIR, "..");

// ---- The unit as shipped ------------------------------------------------------------------------

const unitText = readFileSync(path.join(DEPLOY_DIR, "systemd/vestibule@.service"), "utf8");
function unitValues(key: string): string[] {
  return unitText
    .split("\n")
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1).trim());
}
const workingDirectory = unitValues("WorkingDirectory")[0]!;
/** A unit command line for instance `port`: %i, the working directory, and $MAINPID filled in. */
function unitCommand(key: "ExecStart" | "ExecStartPost", port: number, mainPid = 0): string[] {
  const line = unitValues(key)[0];
  if (!line) throw new Error(`the unit has no ${key}=`);
  return line
    .split(/\s+/)
    .map((word) => word.replaceAll("%i", String(port)).replaceAll("$MAINPID", String(mainPid)).replace(`${workingDirectory}/`, `${root}/`));
}
/** The unit's Environment= lines (not EnvironmentFile) for instance `port`. */
function unitEnvironment(port: number): Record<string, string> {
  return Object.fromEntries(
    unitValues("Environment").map((assignment) => {
      const eq = assignment.indexOf("=");
      return [assignment.slice(0, eq), assignment.slice(eq + 1).replaceAll("%i", String(port))];
    }),
  );
}

// ---- Processes ----------------------------------------------------------------------------------

type Started = {
  child: ChildProcess;
  port: number;
  logs: () => string;
  untilLogged: (text: string) => Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};
const started = new Set<ChildProcess>();
/** Whether any process of `child`'s group is still there (the group is the test's, for cleanup). */
function groupAlive(child: ChildProcess): boolean {
  try {
    process.kill(-child.pid!, 0);
    return true;
  } catch {
    return false;
  }
}
function killGroup(child: ChildProcess) {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // gone
  }
}
afterEach(() => {
  for (const child of started) killGroup(child);
  started.clear();
});
process.once("exit", () => {
  for (const child of started) killGroup(child);
});

const scratch = mkdtempSync(path.join(os.tmpdir(), "vestibule-stop-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs `argv` as systemd would (working directory, the unit's Environment= and `env`), in a process
 * group of its own only so that the test can clean up after a failure: signals go to the main
 * process alone. Resolves once something is logged, not once it listens: a start may fail.
 */
function run(argv: string[], port: number, env: Record<string, string>): Started {
  const fullEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("AUTH_") && !k.startsWith("VITEST") && !k.startsWith("npm_") && k !== "DATABASE_URL") fullEnv[k] = v;
  }
  Object.assign(fullEnv, unitEnvironment(port), { npm_config_cache: path.join(scratch, "npm-cache") }, env);
  const child = spawn(argv[0]!, argv.slice(1), { cwd: root, env: fullEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  started.add(child);
  let output = "";
  const waiting = new Set<() => void>();
  const append = (d: Buffer) => {
    output += d;
    for (const check of waiting) check();
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return {
    child,
    port,
    logs: () => output,
    untilLogged: (text) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!output.includes(text)) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        void exited.then((e) => {
          if (!output.includes(text)) reject(new Error(`exited (${JSON.stringify(e)}) before logging ${text}:\n${output}`));
        });
        check();
      }),
    exited,
  };
}

async function readyz(port: number): Promise<{ status: number; pid: number; body: Record<string, unknown> } | "refused"> {
  try {
    const res = await rawRequest(port, `GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`, 5_000);
    return { status: res.status, pid: Number(res.headers["x-instance-pid"]), body: JSON.parse(res.body) as Record<string, unknown> };
  } catch {
    return "refused";
  }
}

/** The unit's ExecStartPost for instance `port` and main process `pid`, as systemd runs it. */
function readinessCheck(port: number, pid: number): Promise<{ code: number | null; output: string }> {
  const [command, ...args] = unitCommand("ExecStartPost", port, pid);
  const child = spawn(command!, args, { env: { ...process.env, MAINPID: String(pid) }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, output })));
}

// ---- A database per file ------------------------------------------------------------------------

const database = `${runDatabasePrefix()}deploy_stop`;
let dbUrl = "";
async function admin(sql: string) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** deploy/vestibule.env for an instance on `port` (plain http on loopback, no SMTP needed). */
function envFor(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...deployEnv({
      AUTH_URL: `http://localhost:${port}`,
      AUTH_SECRET: "vestibule-deploy-test-secret-0123456789abcdef",
      DATABASE_URL: dbUrl,
      AUTH_EMAIL_SERVER: "smtp://127.0.0.1:9",
      AUTH_EMAIL_FROM: "Vestibule <no-reply@vestibule.test>",
    }),
    VESTIBULE_DATA_DIR: path.join(scratch, "data"),
    ...extra,
  };
}
/**
 * For a test whose subject is not the drain: the stop without the shipped SHUTDOWN_DRAIN_MS (2 s of
 * waiting per stop). The drain is checked by the first two tests here and by drain.test.ts.
 */
const NO_DRAIN = { SHUTDOWN_DRAIN_MS: "0" };
const drainMs = () => Number(deployEnv({ AUTH_URL: "", AUTH_SECRET: "", DATABASE_URL: "", AUTH_EMAIL_SERVER: "", AUTH_EMAIL_FROM: "" }).SHUTDOWN_DRAIN_MS ?? 0);

describe.skipIf(unavailable !== null)("stopping an instance as systemd and docker do: SIGTERM to the main process only", () => {
  beforeAll(async () => {
    await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin(`CREATE DATABASE "${database}"`);
    dbUrl = databaseUrl(ADMIN_URL, database);
  });
  afterAll(() => admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));

  const launchers: [string, (port: number) => string[]][] = [
    ["the unit's ExecStart", (port) => unitCommand("ExecStart", port)],
    ["npm start", () => ["npm", "start", "--silent"]],
  ];
  it.each(launchers)("%s: drains, finishes a slow sign-in in flight, exits 0 and leaves nothing on the port", async (_name, argv) => {
    const port = await freePort();
    const instance = run(argv(port), port, envFor(port));
    await instance.untilLogged("listening on");
    expect(await readyz(port)).toMatchObject({ status: 200 });
    const slow = await slowSignIn(port);

    process.kill(instance.child.pid!, "SIGTERM");
    await instance.untilLogged('"event":"shutdown-started"');
    // The drain: a new connection is still accepted and /readyz says the instance is going.
    expect(await readyz(port)).toMatchObject({ status: 503, body: { reason: "shutdown" } });
    const answer = await slow.finish();
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ url: expect.stringContaining("/auth/signin?error=CredentialsSignin") });

    expect(await instance.exited).toEqual({ code: 0, signal: null });
    expect(instance.logs()).toContain('"event":"shutdown-complete"');
    // Nothing of it is left: no process in its group, nobody on the port.
    await waitUntil(() => groupAlive(instance.child), (alive) => !alive);
    expect(await refused(port)).toBe(true);
  });

  it("Ctrl-C at a terminal under npm start (SIGINT to the whole process group, so node hears it twice): one graceful stop, exit 0", async () => {
    const port = await freePort();
    const instance = run(["npm", "start", "--silent"], port, envFor(port, NO_DRAIN));
    await instance.untilLogged("listening on");
    const slow = await slowSignIn(port);
    // What a terminal does: the signal goes to the foreground process group — npm and node — and
    // npm forwards its copy to node as well.
    process.kill(-instance.child.pid!, "SIGINT");
    await instance.untilLogged('"event":"shutdown-started"');
    expect((await slow.finish()).status).toBe(200);
    expect(await instance.exited).toEqual({ code: 0, signal: null });
    expect(instance.logs()).not.toContain('"event":"shutdown-forced"');
    expect(instance.logs()).toContain('"event":"shutdown-complete"');
  });

  it("npm start exits with the server's own code when the server cannot start", () => {
    const result = spawnSync("npm", ["start", "--silent"], {
      cwd: root,
      env: { ...process.env, NODE_ENV: "production", SHUTDOWN_TIMEOUT_MS: "ten seconds" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stdout + result.stderr).toContain("SHUTDOWN_TIMEOUT_MS");
  });

  it("a configuration mistake stops the start with one JSON log line naming the variable, nothing on stderr", async () => {
    const port = await freePort();
    const instance = run(unitCommand("ExecStart", port), port, envFor(port, { AUTH_SECRET: "short" }));
    expect(await instance.exited).toEqual({ code: 1, signal: null });
    const output = instance.logs().trim();
    const lines = output.split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ level: "error", msg: "startup-failed", message: expect.stringContaining("AUTH_SECRET") });
  });

  it("an exception nobody handles ends the process with one JSON line carrying the error and its stack", async () => {
    const port = await freePort();
    // A real uncaught exception in the running server: a module loaded before it throws from a
    // timer when asked (SIGUSR2), outside any handler of the server's.
    const crasher = `process.on("SIGUSR2", () => setImmediate(() => { throw new Error("crash asked for by the test"); }));`;
    const instance = run(unitCommand("ExecStart", port), port, envFor(port, { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(crasher)}` }));
    await instance.untilLogged("listening on");
    process.kill(instance.child.pid!, "SIGUSR2");
    expect(await instance.exited).toEqual({ code: 1, signal: null });
    const lines = instance.logs().trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({
      level: "error",
      msg: "crashed",
      error: { name: "Error", message: "crash asked for by the test" },
      stack: expect.stringContaining("crash asked for by the test"),
    });
  });

  const unshare = spawnSync("sh", ["-c", "command -v unshare"], { encoding: "utf8" }).stdout.trim();
  const pidNamespaces = unshare !== "" && spawnSync(unshare, ["--pid", "--fork", "true"]).status === 0;
  if (!pidNamespaces) console.log("unshare --pid --fork not permitted here (needs root or user namespaces): the PID 1 case is skipped");
  it.skipIf(!pidNamespaces)("npm start as PID 1 of a new PID namespace (a container): SIGTERM to it drains and exits 0", async () => {
    const port = await freePort();
    const instance = run([unshare, "--pid", "--fork", "npm", "start", "--silent"], port, envFor(port, NO_DRAIN));
    await instance.untilLogged("listening on");
    // The namespace's PID 1 is unshare's child: npm. `docker stop` signals it alone.
    const pid1 = Number(readFileSync(`/proc/${instance.child.pid}/task/${instance.child.pid}/children`, "utf8").trim().split(/\s+/)[0]);
    expect(readFileSync(`/proc/${pid1}/status`, "utf8")).toMatch(/^NSpid:\s+\d+\s+1$/m);
    const slow = await slowSignIn(port);
    process.kill(pid1, "SIGTERM");
    await instance.untilLogged('"event":"shutdown-started"');
    expect((await slow.finish()).status).toBe(200);
    expect(await instance.exited).toEqual({ code: 0, signal: null });
    expect(instance.logs()).toContain('"event":"shutdown-complete"');
    expect(await refused(port)).toBe(true);
  });

  it("an idle instance stops promptly after its drain, with a connection that never sent a request and an idle keep-alive one open", async () => {
    const port = await freePort();
    const instance = run(unitCommand("ExecStart", port), port, envFor(port));
    await instance.untilLogged("listening on");
    // A connection a proxy or browser opened ahead of need, and one idle after an answer.
    const unused = await openSocket(port);
    unused.on("error", () => {});
    const keptAlive = await openSocket(port);
    keptAlive.on("error", () => {});
    const answered = received(keptAlive, "\r\n\r\n");
    keptAlive.write(`GET /healthz HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`);
    await answered;

    const signalled = performance.now();
    process.kill(instance.child.pid!, "SIGTERM");
    expect(await instance.exited).toEqual({ code: 0, signal: null });
    const took = performance.now() - signalled;
    console.log(`[stop] idle stop with SHUTDOWN_DRAIN_MS=${drainMs()}: exited ${Math.round(took)} ms after SIGTERM`);
    // A failure signal, not a measurement: SHUTDOWN_TIMEOUT_MS (10 s) is what a held connection costs.
    expect(took).toBeLessThan(drainMs() + 2_500);
    unused.destroy();
    keptAlive.destroy();
  });

  it("the unit's readiness check fails for a start whose port another process holds, and passes for the process it started", async () => {
    const port = await freePort();
    const old = run(unitCommand("ExecStart", port), port, envFor(port, NO_DRAIN));
    await old.untilLogged("listening on");
    // The old one answers ready; a new start on the same port must neither pass nor stay.
    const second = run(unitCommand("ExecStart", port), port, envFor(port));
    const check = readinessCheck(port, second.child.pid!);
    expect(await second.exited).toMatchObject({ code: 1 });
    // It fails because its process is gone, not by a timeout (its own has none: TimeoutStartSec).
    expect(await check).toMatchObject({ code: 1 });
    const failure = second.logs().split("\n").find((line) => line.includes("EADDRINUSE"));
    expect(failure, second.logs()).toBeDefined();
    expect(JSON.parse(failure!)).toMatchObject({ level: "error" });

    expect(await readinessCheck(port, old.child.pid!)).toMatchObject({ code: 0 });
    process.kill(old.child.pid!, "SIGTERM");
    expect(await old.exited).toEqual({ code: 0, signal: null });
  });
});

describe.skipIf(unavailable !== null)("a start while the database is down", () => {
  const outageDb = `${runDatabasePrefix()}deploy_outage_start`;
  let relay: DatabaseRelay;
  beforeAll(async () => {
    await admin(`DROP DATABASE IF EXISTS "${outageDb}" WITH (FORCE)`);
    await admin(`CREATE DATABASE "${outageDb}"`);
    relay = new DatabaseRelay(await freePort());
  });
  afterAll(async () => {
    await relay.close();
    await admin(`DROP DATABASE IF EXISTS "${outageDb}" WITH (FORCE)`);
  });

  it("keeps running not ready (503 database) and turns ready by itself, migrated, once the database answers", async () => {
    const port = await freePort();
    // The relay's port is closed: every connection to the database is refused.
    const instance = run(unitCommand("ExecStart", port), port, envFor(port, { ...NO_DRAIN, DATABASE_URL: relay.via(databaseUrl(ADMIN_URL, outageDb)) }));
    await instance.untilLogged("listening on");
    expect(await readyz(port)).toMatchObject({ status: 503, body: { reason: "database" } });
    // Still there after several of its retries (the old start gave up after 1.5 s).
    await instance.untilLogged('"event":"database-waiting"');
    expect(instance.child.exitCode).toBeNull();
    // Meanwhile a visitor reads a 503 page in their language, a JSON client 503 ServiceUnavailable.
    const page = await rawRequest(port, `GET /auth/signin HTTP/1.1\r\nHost: localhost:${port}\r\nAccept: text/html\r\nAccept-Language: fr\r\nConnection: close\r\n\r\n`);
    expect(page.status).toBe(503);
    expect(page.headers["retry-after"]).toBe("5");
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.body).toContain('<html lang="fr"');
    expect(page.body).toContain("Le service est temporairement indisponible.");
    const json = await rawRequest(port, `GET /auth/session HTTP/1.1\r\nHost: localhost:${port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`);
    expect(json.status).toBe(503);
    expect(json.headers["retry-after"]).toBe("5");
    expect(JSON.parse(json.body)).toEqual({ error: "ServiceUnavailable" });

    await relay.open();
    const ready = await waitUntil(() => readyz(port), (r) => r !== "refused" && r.status === 200, { everyMs: 200 });
    expect(ready).toMatchObject({ status: 200, pid: instance.child.pid, body: { status: "ready" } });
    expect(instance.logs()).toContain("applied 20261121120234_init");
    expect(instance.child.exitCode).toBeNull();
    process.kill(instance.child.pid!, "SIGTERM");
    expect(await instance.exited).toEqual({ code: 0, signal: null });
  });

  it("a database that accepts connections and never answers does not hold the start either", async () => {
    const stalled = new DatabaseRelay(await freePort());
    await stalled.open();
    stalled.stall();
    try {
      const port = await freePort();
      // The migration's connect gives up after DATABASE_TIMEOUT_MS (1 s here, 5 s by default): not a
      // wait of the test's, the bound under test.
      const instance = run(unitCommand("ExecStart", port), port, envFor(port, { ...NO_DRAIN, DATABASE_URL: stalled.via(databaseUrl(ADMIN_URL, outageDb)), DATABASE_TIMEOUT_MS: "1000" }));
      await instance.untilLogged("listening on");
      expect(instance.logs()).toContain('"event":"database-waiting"');
      expect(await readyz(port)).toMatchObject({ status: 503, body: { reason: "database" } });
      stalled.restore();
      await waitUntil(() => readyz(port), (r) => r !== "refused" && r.status === 200, { everyMs: 200 });
      process.kill(instance.child.pid!, "SIGTERM");
      expect(await instance.exited).toEqual({ code: 0, signal: null });
    } finally {
      await stalled.close();
    }
  });
});
