// `npm start` reads the settings file before any setting (ADR 113): the one
// VESTIBULE_ENV_FILE names, else the project's .env (which tests never write: the checkout is
// shared; tests/unit/core/env-file.test.ts covers how the file is chosen). A variable already in
// the environment wins; a malformed line stops the start naming the file and its line.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

function settingsFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "vestibule-settings-")), "app.env");
  writeFileSync(file, text);
  return file;
}

/** `node server/main.ts` as npm start runs it; the startup-failed line's message. */
function failedStart(env: Record<string, string>): { status: number | null; message: unknown } {
  const result = spawnSync(process.execPath, [path.join(root, "server/main.ts")], {
    cwd: root,
    env: { ...process.env, NODE_ENV: "production", ...env },
    encoding: "utf8",
    timeout: 20_000,
  });
  expect(result.stderr).toBe("");
  const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  return { status: result.status, message: lines.find((line) => line.msg === "startup-failed")?.message };
}

describe("npm start and its settings file", () => {
  it("an operator's settings file with a malformed line stops the start naming the file and the line", () => {
    const file = settingsFile("PORT=4000\nAUTH_SITE_NAME=Acme Notes\n");
    const { status, message } = failedStart({ VESTIBULE_ENV_FILE: file });
    expect(status).toBe(1);
    expect(message).toContain(`${file}:2: put the value of AUTH_SITE_NAME in single quotes`);
  });

  it("a setting from the file is read before the start checks it; the same variable in the environment wins", () => {
    const file = settingsFile("SHUTDOWN_TIMEOUT_MS=soon\nSHUTDOWN_DRAIN_MS=1000\n");
    const fromFile = failedStart({ VESTIBULE_ENV_FILE: file });
    expect(fromFile.status).toBe(1);
    expect(fromFile.message).toMatch(/SHUTDOWN_TIMEOUT_MS must be a whole number of milliseconds/);
    // The shell's SHUTDOWN_TIMEOUT_MS wins over "soon"; the file's SHUTDOWN_DRAIN_MS is still read.
    const shellWins = failedStart({ VESTIBULE_ENV_FILE: file, SHUTDOWN_TIMEOUT_MS: "1000" });
    expect(shellWins.status).toBe(1);
    expect(shellWins.message).toMatch(/SHUTDOWN_DRAIN_MS/);
  });
});
