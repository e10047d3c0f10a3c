import { availableParallelism } from "node:os";
import { reactRouter } from "@react-router/dev/vite";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { devBootstrap } from "./scripts/dev-bootstrap.ts";

const inVitest = Boolean(process.env.VITEST);

/** Packages only the server imports (loaders, actions, *.server.ts): never in a browser bundle. */
const SERVER_ONLY_PACKAGES = ["@node-rs/argon2", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "@prisma/client", "better-sqlite3", "jose", "nodemailer", "oauth4webapi", "otpauth", "pg", "pino", "prom-client", "rate-limiter-flexible", "remix-auth", "remix-auth-form"];

/**
 * `process.env` in the browser under `npm run dev`, as `react-router build` already has it: `{}`
 * with NODE_ENV. Libraries written for Next.js read it when imported (next-auth/react:
 * process.env.NEXTAUTH_URL), and Vite's dependency bundler only replaces NODE_ENV, so such a page
 * failed with "process is not defined" and never hydrated (issue 33). Only the browser's
 * dependency bundle: server code keeps the real process.env.
 */
function browserProcessEnv(): Plugin {
  return {
    name: "vestibule-browser-process-env",
    apply: "serve",
    configEnvironment(name, _options, { mode }) {
      if (name !== "client") return;
      const nodeEnv = JSON.stringify(process.env.NODE_ENV || mode);
      const define: Record<string, string> = {};
      for (const prefix of ["", "global.", "globalThis."]) {
        define[`${prefix}process.env`] = "{}";
        define[`${prefix}process.env.NODE_ENV`] = nodeEnv;
      }
      return { optimizeDeps: { rolldownOptions: { transform: { define } } } };
    },
  };
}

export default defineConfig({
  resolve: { tsconfigPaths: true },
  plugins: inVitest ? [] : [devBootstrap(), browserProcessEnv(), reactRouter()],
  server: { port: 5173 },
  // `npm run dev`'s browser dependency bundle, made once at the first page instead of three times
  // with a full reload each: the packages the pages load (some only on demand, found late, each
  // find one more bundling and reload) are named up front, and server-only packages, which Vite's
  // scan finds in the route modules' loaders and actions but no browser ever loads, are left out.
  optimizeDeps: {
    include: ["react-intl", "@formatjs/intl", "uqr", "zod", "@simplewebauthn/browser", "next-auth/react"],
    exclude: SERVER_ONLY_PACKAGES,
  },
  test: {
    // Each suite gets its own real database: see tests/support/setup-env.ts.
    globalSetup: ["tests/support/global-setup.ts"],
    // The stylesheet's `?url` import (app/root.tsx, app/method-not-allowed.tsx) gets its URL, as
    // in the dev server: without CSS processing Vitest makes it "", and every page a test
    // renders printed React's warning about an empty href.
    css: { include: [/app\.css/] },
    setupFiles: ["tests/support/setup-env.ts", "tests/support/matchers.ts"],
    // Tests wait for states, not for a clock; these only bound a hang, generous enough for a
    // loaded 2-core machine (30 s timed out a dozen sound tests there, issue 18).
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // One test file per core. Vitest's default for a run is one less than the cores: a single
    // worker on a 2-core machine, so every file waited for the one before while much of each
    // file's time is spent waiting on a database, a server or a browser. VITEST_MAX_WORKERS or
    // --maxWorkers still override it. docs/decisions/065-test-suite-speed.md
    maxWorkers: availableParallelism(),
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["tests/unit/**/*.test.{ts,tsx}"], env: { VESTIBULE_TEST_DB: "sqlite" } },
      },
      {
        extends: true,
        test: { name: "sqlite", include: ["tests/integration/**/*.test.{ts,tsx}"], env: { VESTIBULE_TEST_DB: "sqlite" }, isolate: false },
      },
      {
        extends: true,
        test: { name: "postgres", include: ["tests/integration/**/*.test.{ts,tsx}"], env: { VESTIBULE_TEST_DB: "postgres" }, isolate: false },
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["tests/browser/**/*.test.{ts,tsx}"],
          // One production build and one Chromium for the whole run, shared by every file.
          globalSetup: ["tests/support/global-setup.ts", "tests/support/build-app.ts", "tests/support/browser-server.ts"],
          env: { VESTIBULE_TEST_DB: "sqlite" },
          // Files run side by side with the other projects' (no fileParallelism: false): each
          // starts its own servers on free ports with their own data folders and PostgreSQL
          // databases, and opens its own browser contexts. docs/decisions/065-test-suite-speed.md
        },
      },
      // deploy/ run for real: nginx, TLS, two instances on PostgreSQL (docs/decisions/066).
      {
        extends: true,
        test: {
          name: "deploy",
          include: ["tests/deploy/**/*.test.ts"],
          globalSetup: ["tests/support/global-setup.ts", "tests/support/build-app.ts"],
          env: { VESTIBULE_TEST_DB: "sqlite" },
          // After every other project: its rolling restart and revocation timings measure the
          // deployment, not the rest of the suite competing for the same two cores. Its files run
          // side by side (each stack has its own ports, database, folders and Chromium HOME): the
          // revocation bound (1 s) is fifty times what is measured, and the rolling restart
          // waits for states. docs/decisions/088-test-suite-time.md
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
