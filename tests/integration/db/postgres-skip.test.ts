// The postgres project's behaviour when no PostgreSQL server answers, checked by running Vitest
// itself against a port where nothing listens: skipped with one line on a developer's machine,
// a hard failure in CI. Runs once, from the sqlite project.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { dbLabel } from "../../support/db.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const vitestBin = path.join(path.dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
const out = mkdtempSync(path.join(tmpdir(), "vestibule-skip-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

type JsonReport = { numTotalTests: number; numPassedTests: number; numFailedTests: number; numPendingTests: number; numFailedTestSuites: number };

function vitestAgainstNothing(extraEnv: Record<string, string>, report: string) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...extraEnv };
  env.VESTIBULE_TEST_PG_URL = "postgresql://postgres@127.0.0.1:1/postgres";
  return new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      // One file with a dozen tests and hooks is enough to see every test skipped and no hook
      // run; the whole folder only made each nested run collect more. docs/decisions/088-test-suite-time.md
      [vitestBin, "run", "--project", "postgres", "tests/integration/db/models.test.ts", "--reporter=json", `--outputFile=${report}`],
      { cwd: root, env, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, output: stdout + stderr }),
    );
  });
}

describe.runIf(dbLabel === "sqlite")("postgres project without a PostgreSQL server", () => {
  test("is skipped with one explanatory line, without running any test or hook", async () => {
    const report = path.join(out, "skip.json");
    const { code, output } = await vitestAgainstNothing({ CI: "false" }, report);
    expect(output.match(/PostgreSQL at 127\.0\.0\.1:1 unreachable: postgres project skipped/g)).toHaveLength(1);
    expect(code).toBe(0);
    const r = JSON.parse(readFileSync(report, "utf8")) as JsonReport;
    expect(r.numTotalTests).toBeGreaterThan(10);
    expect(r.numPendingTests).toBe(r.numTotalTests);
    expect([r.numPassedTests, r.numFailedTests, r.numFailedTestSuites]).toEqual([0, 0, 0]);
  });

  test("fails the run in CI", async () => {
    const { code, output } = await vitestAgainstNothing({ CI: "true" }, path.join(out, "ci.json"));
    expect(code).not.toBe(0);
    expect(output).toContain("PostgreSQL at 127.0.0.1:1 unreachable (connect ECONNREFUSED 127.0.0.1:1); CI requires it for the postgres project");
  });
});
