// The real thing for browser tests: the production build served by server/main.ts on a free
// loopback port with its own data folder, and the system Chromium driven by playwright-core.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SECRET = "vestibule-browser-test-secret-0123456789abcdef";

export type RunningApp = {
  url: string;
  /** The server process, e.g. to read its memory use from /proc/<pid>/status. */
  pid: number;
  dataDir: string;
  env: Record<string, string>;
  logs: () => string;
  /** Settles when the server process has ended, with its exit code (null when a signal killed it). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop: () => Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function baseEnv(): Record<string, string> {
  // The worker's environment without anything auth-related the test setup or shell put there.
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("AUTH_") || k === "DATABASE_URL" || k === "VESTIBULE_DATA_DIR" || k.startsWith("VITEST")) continue;
    env[k] = v;
  }
  return env;
}

/** Starts the production server (built by tests/support/build-app.ts) with `env` on top of a clean environment. */
export async function startApp(env: Record<string, string> = {}): Promise<RunningApp> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-app-"));
  const url = `http://localhost:${port}`;
  const fullEnv = {
    ...baseEnv(),
    NODE_ENV: "production",
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTH_URL: url,
    AUTH_SECRET: SECRET,
    VESTIBULE_DATA_DIR: dataDir,
    ...env,
  };
  const child: ChildProcess = spawn(process.execPath, [path.join(root, "server/main.ts")], {
    cwd: root,
    env: fullEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  await new Promise<void>((resolve, reject) => {
    // A server that did not start in time is stopped: left running, it would outlive the test run.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not start within 20 s:\n${output}`));
    }, 20_000);
    const check = () => {
      if (output.includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", check);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    pid: child.pid!,
    dataDir,
    env: fullEnv,
    logs: () => output,
    exited,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `npm run user:add`'s script against a running app's database. */
export function addUser(app: RunningApp, user: { email: string; password: string; name?: string }) {
  const args = [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/user-add.ts"), "--email", user.email, "--password", user.password];
  if (user.name) args.push("--name", user.name);
  const result = spawnSync(process.execPath, args, { cwd: root, env: app.env, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`user:add failed: ${result.stderr}`);
  return result.stdout;
}

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}
