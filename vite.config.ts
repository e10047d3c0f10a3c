import { reactRouter } from "@react-router/dev/vite";
import { defineConfig } from "vitest/config";
import { devBootstrap } from "./scripts/dev-bootstrap.ts";

const inVitest = Boolean(process.env.VITEST);

export default defineConfig({
  resolve: { tsconfigPaths: true },
  plugins: inVitest ? [] : [devBootstrap(), reactRouter()],
  server: { port: 5173 },
  test: {
    // Each suite gets its own real database: see tests/support/setup-env.ts.
    globalSetup: ["tests/support/global-setup.ts"],
    setupFiles: ["tests/support/setup-env.ts", "tests/support/matchers.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["tests/unit/**/*.test.{ts,tsx}"], env: { VESTIBULE_TEST_DB: "sqlite" } },
      },
      {
        extends: true,
        test: { name: "sqlite", include: ["tests/integration/**/*.test.{ts,tsx}"], env: { VESTIBULE_TEST_DB: "sqlite" } },
      },
      {
        extends: true,
        test: { name: "postgres", include: ["tests/integration/**/*.test.{ts,tsx}"], env: { VESTIBULE_TEST_DB: "postgres" } },
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["tests/browser/**/*.test.{ts,tsx}"],
          globalSetup: ["tests/support/global-setup.ts", "tests/support/build-app.ts"],
          env: { VESTIBULE_TEST_DB: "sqlite" },
          fileParallelism: false,
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
          fileParallelism: false,
        },
      },
    ],
  },
});
