// Runs one of the npm run scripts (scripts/*.ts) as a child process through tsx, against the test
// file's own database (its DATABASE_URL or VESTIBULE_DATA_DIR), as an operator would.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { AdminCommand } from "../../scripts/admin-cli.ts";
import { TEST_AUTH_SECRET } from "./env.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = createRequire(import.meta.url).resolve("tsx/cli");

export type CliResult = { code: number; stdout: string; stderr: string };

export function runScript(script: string, args: string[], env: Record<string, string | undefined> = {}, input?: string): Promise<CliResult> {
  return run(process.execPath, [tsx, script, ...args], { ...process.env, VESTIBULE_LOG: "silent", VESTIBULE_ENV_FILE: "/dev/null", ...env }, input);
}

/**
 * `npm run <name> -- <args>` from the project root, as an operator types it, with `input` on
 * standard input. The environment is an operator's shell: the test's database settings
 * (DATABASE_URL, VESTIBULE_DATA_DIR), NODE_ENV and every AUTH_* are left out; `env` adds to it.
 */
export function runNpm(name: string, args: string[], env: Record<string, string | undefined> = {}, input?: string): Promise<CliResult> {
  const shell: Record<string, string | undefined> = { ...process.env };
  for (const key of Object.keys(shell)) {
    if (key.startsWith("AUTH_") || key.startsWith("VITEST") || ["DATABASE_URL", "VESTIBULE_DATA_DIR", "NODE_ENV", "TEST", "VESTIBULE_TEST_DB"].includes(key)) delete shell[key];
  }
  // /dev/null (empty) unless the test names a file: a developer's own .env in the checkout stays out of the tests (ADR 113).
  return run("npm", ["run", name, "--", ...args], { ...shell, VESTIBULE_LOG: "silent", VESTIBULE_ENV_FILE: "/dev/null", ...env }, input);
}

/**
 * deploy/vestibule.env as shipped, with this test's database (its DATABASE_URL, or for SQLite its
 * data folder in place of the DATABASE_URL line), a test secret and `replace` written in.
 */
export function productionEnvFile(replace: Record<string, string> = {}): string {
  const values: Record<string, string | null> = { AUTH_SECRET: TEST_AUTH_SECRET, ...replace };
  if (process.env.DATABASE_URL) values.DATABASE_URL = process.env.DATABASE_URL;
  else values.DATABASE_URL = null;
  const lines = readFileSync(path.join(root, "deploy/vestibule.env"), "utf8")
    .split("\n")
    .flatMap((line) => {
      const name = /^([A-Z_][A-Z0-9_]*)=/.exec(line)?.[1];
      if (!name || !(name in values)) return [line];
      const value = values[name];
      return value === null ? [] : [`${name}='${value}'`];
    });
  if (!process.env.DATABASE_URL) lines.push(`VESTIBULE_DATA_DIR='${process.env.VESTIBULE_DATA_DIR}'`);
  const file = path.join(mkdtempSync(path.join(tmpdir(), "vestibule-env-")), "vestibule.env");
  writeFileSync(file, lines.join("\n"));
  return file;
}

function run(file: string, args: string[], env: Record<string, string | undefined>, input?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(input ?? "");
  });
}

/**
 * Runs the command of `script` (one of the scripts/user-*.ts, built on runCommand) in this
 * process, against the test's database: the same parse, configuration, migration, operation,
 * messages and exit code, without a second Node process loading tsx, the app and Prisma (about a
 * second of CPU each). For a command run many times with different data; each command keeps at
 * least one test through `runScript`, the operator's way (ADR 088).
 */
export async function runInProcess(script: string, args: string[]): Promise<CliResult> {
  let main = commands.get(script);
  if (!main) {
    main = commandOf(script);
    commands.set(script, main);
  }
  return (await main)(args);
}

/** Imports `script` once, with runCommand told to hand its command over instead of running it. */
async function commandOf(script: string): Promise<AdminCommand> {
  const { IN_PROCESS_HOOK } = await import("../../scripts/admin-cli.ts");
  let handed: AdminCommand | undefined;
  const slot = globalThis as { [IN_PROCESS_HOOK]?: (main: AdminCommand) => void };
  slot[IN_PROCESS_HOOK] = (m) => void (handed = m);
  try {
    await import(/* @vite-ignore */ new URL(`../../${script}`, import.meta.url).href);
  } finally {
    delete slot[IN_PROCESS_HOOK];
  }
  if (!handed) throw new Error(`runInProcess: ${script} did not hand over its command`);
  return handed;
}

/** One import per script and test file, shared by the calls that start together. */
const commands = new Map<string, Promise<AdminCommand>>();
