// Runs one of the npm run scripts (scripts/*.ts) as a child process through tsx, against the test
// file's own database (its DATABASE_URL or VESTIBULE_DATA_DIR), as an operator would.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = createRequire(import.meta.url).resolve("tsx/cli");

export type CliResult = { code: number; stdout: string; stderr: string };

export function runScript(script: string, args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [tsx, script, ...args],
      { cwd: root, env: { ...process.env, VESTIBULE_LOG: "silent", ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
