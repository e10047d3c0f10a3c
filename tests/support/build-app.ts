// Global setup of the browser project: one production build per run, shared by every browser test.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

// The browser and deploy projects both list this setup; one build per run serves both.
const BUILT = Symbol.for("vestibule.test.app-built");
const run = globalThis as typeof globalThis & { [BUILT]?: true };

export default function buildApp() {
  if (run[BUILT]) return;
  const started = Date.now();
  const result = spawnSync(process.execPath, [path.join(root, "node_modules/@react-router/dev/bin.cjs"), "build"], {
    cwd: root,
    // Without VITEST* the config keeps the React Router plugin (vite.config.ts drops it under Vitest).
    // VESTIBULE_EXAMPLES=1: with the documented example pages (app/routes.ts), which tests open.
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST"))), NODE_ENV: "production", VESTIBULE_EXAMPLES: "1" },
    encoding: "utf8",
  });
  if (result.status !== 0) {
    throw new Error(`react-router build failed:\n${result.stdout}\n${result.stderr}`);
  }
  run[BUILT] = true;
  console.log(`[browser] production build ready in ${Date.now() - started} ms`);
}
