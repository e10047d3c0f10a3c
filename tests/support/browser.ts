// The real thing for browser tests: the production build served by server/main.ts on a free
// loopback port with its own data folder, and the system Chromium driven by playwright-core.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page, type Response } from "playwright-core";
import { inject } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SECRET = "vestibule-browser-test-secret-0123456789abcdef";

export type RunningApp = {
  url: string;
  /** The server process, e.g. to read its memory use from /proc/<pid>/status. */
  pid: number;
  dataDir: string;
  env: Record<string, string>;
  logs: () => string;
  /** Settles once the server's output so far satisfies `done` (a line logged), however long that takes. */
  untilLogged: (done: (output: string) => boolean) => Promise<void>;
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

/**
 * Starts the production server (built by tests/support/build-app.ts) with `env` on top of a clean
 * environment; `nodeFlags` before server/main.ts (kept by its restart with the memory limits);
 * `launcher`, a command that runs node in its place (taskset -c 0).
 */
export async function startApp(env: Record<string, string> = {}, nodeFlags: readonly string[] = [], launcher: readonly string[] = []): Promise<RunningApp> {
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
    // A developer's own .env in the checkout stays out of the tests (ADR 113); a test may name a file.
    VESTIBULE_ENV_FILE: "/dev/null",
    ...env,
  };
  // `launcher` (e.g. taskset -c 0) runs node in its place, same pid (it execs).
  const command = [...launcher, process.execPath, ...nodeFlags, path.join(root, "server/main.ts")];
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    cwd: root,
    env: fullEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const waiting = new Set<() => void>();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const append = (d: Buffer) => {
    output += d;
    for (const check of waiting) check();
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  await new Promise<void>((resolve, reject) => {
    // Not a wait for the start (that is "listening on" or the exit below): a bound so a server
    // that hangs fails with its output instead of the hook's bare timeout.
    const timer = setTimeout(() => {
      // Not left running behind the failed test.
      child.kill("SIGKILL");
      reject(new Error(`server did not start within ${STEP_LIMIT_MS} ms:\n${output}`));
    }, STEP_LIMIT_MS);
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
    untilLogged: (done) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          let met: boolean;
          try {
            met = done(output);
          } catch (e) {
            waiting.delete(check);
            return reject(e);
          }
          if (!met) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
      }),
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
  const args = [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/user-add.ts"), "--email", user.email];
  if (user.name) args.push("--name", user.name);
  // The password on standard input, as deploy/README.md shows it.
  const result = spawnSync(process.execPath, args, { cwd: root, env: app.env, encoding: "utf8", input: `${user.password}\n` });
  if (result.status !== 0) throw new Error(`user:add failed: ${result.stderr}`);
  return result.stdout;
}

/** Runs `npm run user:role`'s script against a running app's database (an operator making an admin). */
export function setUserRole(app: RunningApp, email: string, role: "admin" | "user") {
  const args = [path.join(root, "node_modules/tsx/dist/cli.mjs"), path.join(root, "scripts/user-role.ts"), "--email", email, "--role", role];
  const result = spawnSync(process.execPath, args, { cwd: root, env: app.env, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`user:role failed: ${result.stderr}`);
  return result.stdout;
}

/**
 * How long one browser step (a navigation, a click, waiting for an element) may take before it
 * fails naming itself. Not how long a step is expected to take: every wait is for a state (an
 * element visible, the page hydrated, a URL reached); this only turns a step that never gets there
 * into a readable failure well before the test's own timeout (vite.config.ts, browser project).
 */
export const STEP_LIMIT_MS = 60_000;

/**
 * The run's one Chromium (started by tests/support/browser-server.ts), connected for this file.
 * Closing the returned Browser closes this file's contexts and leaves the browser to the others.
 */
export async function connectBrowser(): Promise<Browser> {
  const endpoint = inject("vestibuleBrowserEndpoint");
  if (!endpoint) throw new Error(`${inject("vestibuleBrowserError")} (install chromium or set CHROMIUM_PATH)`);
  return chromium.connect(endpoint);
}

/** A fresh context (no cookies, storage or pages of another) whose steps wait up to STEP_LIMIT_MS. */
export async function newContext(browser: Browser, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(STEP_LIMIT_MS);
  context.setDefaultNavigationTimeout(STEP_LIMIT_MS);
  return context;
}

/**
 * Waits until React has hydrated the page loaded last: app/root.tsx sets <html data-hydrated> in
 * an effect, which runs once every component is interactive. Only for JavaScript on; call it
 * after the document changed (page.goto, or page.waitForURL after a form that posts the page).
 */
export async function waitForHydration(page: Page): Promise<void> {
  await page.locator("html[data-hydrated]").waitFor({ state: "attached" });
}

/** page.goto(url), then waits for hydration: the page's buttons and forms have their handlers. */
export async function gotoHydrated(page: Page, url: string): Promise<Response | null> {
  const response = await page.goto(url);
  await waitForHydration(page);
  return response;
}
