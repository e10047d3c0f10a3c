// `npm run dev` stopped by a signal to the npm process (a terminal's Ctrl-C reaches the whole
// group; an IDE, a process manager or `kill <pid>` reach npm alone). npm passes the signal to the
// script's shell; the script `exec`s react-router so the shell does not stand between them, and
// react-router passes it to the dev server it relaunched. Before, the shell died and the dev server
// stayed, orphaned, holding the app's and the dev IdP's ports: the next start failed with
// EADDRINUSE (issue 33). The exact command line, then the signal to npm alone, then the ports.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../support/browser";
import { dbLabel } from "../../support/db";
import { devEnvironment } from "../../support/dev-server";
import { waitUntil } from "../../support/wait";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** Whether something accepts a TCP connection on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The ids of the processes whose parent is `pid` (Linux /proc), recursively. */
async function descendants(pid: number): Promise<number[]> {
  const { readdirSync, readFileSync } = await import("node:fs");
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf) if (parent === p) (found.push(child), walk(child));
  };
  walk(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// What a test started; killed after it whatever happened (a failure here is the test timing out
// while the orphans hold the ports: they must not outlive it).
const started: { pids: number[]; dataDir: string | null } = { pids: [], dataDir: null };
afterEach(() => {
  for (const pid of started.pids.filter(alive)) process.kill(pid, "SIGKILL");
  if (started.dataDir) rmSync(started.dataDir, { recursive: true, force: true });
  started.pids = [];
  started.dataDir = null;
});

// The dev server is one (the embedded SQLite database): run once, in the sqlite project.
describe.skipIf(dbLabel !== "sqlite")("npm run dev stopped by a signal to npm", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("%s to the npm process stops the dev server and frees both ports", async (signal) => {
    const [port, idpPort] = [await freePort(), await freePort()];
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-dev-stop-"));
    started.dataDir = dataDir;
    let output = "";
    // Its own process group, as a terminal gives it, but the signal goes to npm's pid alone.
    const npm: ChildProcess = spawn("npm", ["run", "dev", "--", "--port", String(port)], {
      cwd: root,
      env: { ...devEnvironment(), NO_COLOR: "1", VESTIBULE_DATA_DIR: dataDir, VESTIBULE_DEV_IDP_PORT: String(idpPort) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    npm.stdout!.on("data", (d: Buffer) => (output += d));
    npm.stderr!.on("data", (d: Buffer) => (output += d));
    const exited = new Promise<void>((resolve) => npm.once("exit", () => resolve()));
    started.pids.push(npm.pid!);
    await waitUntil(
      async () => (await listening(port)) && (await listening(idpPort)),
      (up) => up || npm.exitCode !== null,
    );
    expect(npm.exitCode, output).toBeNull();
    const left = await descendants(npm.pid!);
    started.pids.push(...left);
    expect(left.length, output).toBeGreaterThan(0);

    npm.kill(signal);
    await exited;
    await waitUntil(
      async () => (await listening(port)) || (await listening(idpPort)) || left.some(alive),
      (busy) => !busy,
    );
    expect(left.filter(alive)).toEqual([]);
  });
});
