// `npm run dev` for a browser test: React Router's dev server (Vite, React's development build,
// so hydration warnings are printed) on a free loopback port with its own data folder, the way a
// developer runs it (the dev bootstrap migrates and seeds the database: demo@vestibule.dev).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, STEP_LIMIT_MS } from "./browser";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export const DEMO_USER = { email: "demo@vestibule.dev", password: "vestibule-demo" };

export type DevServer = { url: string; logs: () => string; stop: () => Promise<void> };

/**
 * The worker's environment without Vitest's (vite.config.ts drops the React Router plugin under
 * Vitest) or anything auth-related the test setup put there: what `npm run dev` gets from a shell.
 */
export function devEnvironment(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => v !== undefined && !k.startsWith("VITEST") && !k.startsWith("AUTH_") && k !== "DATABASE_URL" && k !== "NODE_ENV"),
  ) as Record<string, string>;
}

export async function startDevServer(env: Record<string, string> = {}): Promise<DevServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "vestibule-dev-"));
  const clean = devEnvironment();
  const child = spawn(process.execPath, [path.join(root, "node_modules/@react-router/dev/bin.cjs"), "dev", "--host", "127.0.0.1", "--port", String(port), "--strictPort"], {
    cwd: root,
    env: { ...clean, NO_COLOR: "1", VESTIBULE_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d));
  child.stderr.on("data", (d: Buffer) => (output += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    // A bound so a dev server that hangs fails with its output, not the hook's bare timeout.
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      reject(new Error(`dev server did not start within ${STEP_LIMIT_MS} ms:\n${output}`));
    }, STEP_LIMIT_MS);
    child.stdout.on("data", () => {
      // Vite prints the port in bold when colours are on: match the text without its escapes.
      if (output.replace(/\x1b\[[0-9;]*m/g, "").includes(`127.0.0.1:${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`dev server exited with ${code}:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    logs: () => output,
    stop: async () => {
      // react-router dev relaunches itself once (--conditions=development) and passes SIGTERM on.
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
