// The frame every maintenance command shares — `npm run user:*`, `db:cleanup`, `sessions:end-all`,
// `secret:reseal` (ADR 077/078/107/109): parse the options, read the env file
// VESTIBULE_ENV_FILE names, find the database (never create one: with no DATABASE_URL and no
// embedded database file it stops and names the file it looked for), say on stderr which database
// it uses, load the configuration, migrate, run one operation of app/auth (the code the /admin
// pages call), print one clear message. Exit codes: 0 done, 1 not found or refused, or done with
// findings the operator must act on (or the env file, the configuration or the database failed,
// or there is none), 2 usage. `db:migrate` and the server are not maintenance commands: they
// create the database.
import { existsSync } from "node:fs";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError, databaseLocation, getConfig } from "../app/auth/core/config.server";
import { EnvFileError, loadCommandEnvFile, PRODUCTION_ENV_FILE, ENV_FILE_VARIABLE } from "../app/auth/core/env-file.server";
import { closeDb } from "../app/db/client.server";
import { databaseLabel, sqliteFile } from "../app/db/location.server";
import { migrate } from "../app/db/migrate.server";

export class UsageError extends Error {}

/** A refusal or a missing user: printed on stderr, exit code 1. */
export class Refused extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** What one run of a command printed, and its exit code. */
export type CommandResult = { code: number; stdout: string; stderr: string };

/** A command's whole run for `args` (parse, configure, migrate, operate), as its result. */
export type AdminCommand = (args: string[]) => Promise<CommandResult>;

/**
 * Where runCommand hands a command over instead of running it on process.argv: the tests that
 * run one command many times with different data set it and call the command in their own
 * process (tests/support/cli.ts, ADR 088); the command's own process never sets it.
 */
export const IN_PROCESS_HOOK = Symbol.for("vestibule.admin-cli.in-process");

/** What a command's operation may do besides returning its message. */
export type CommandIo = {
  /** A line on stderr, `<command>: warning: <message>`, printed whatever the outcome. */
  warn: (message: string) => void;
  /** The operation finished but found what the operator must act on: its output is printed, the exit code is 1. */
  fail: () => void;
};

type FrameOptions = { migrate?: boolean };

/**
 * Reads the env file VESTIBULE_ENV_FILE names, then finds the database the environment names:
 * PostgreSQL (DATABASE_URL) or an embedded SQLite file that exists. Returns how to name it (no
 * password). Without either, throws Refused naming the file it looked for: a maintenance command
 * never creates a database.
 */
export function findDatabase(name: string): string {
  loadCommandEnvFile();
  const { databaseUrl, dataDir } = databaseLocation();
  if (!databaseUrl && !existsSync(sqliteFile(dataDir))) {
    throw new Refused(
      `no database: DATABASE_URL is not set and there is no SQLite database at ${sqliteFile(dataDir)}.\n` +
        `  With the production settings: ${ENV_FILE_VARIABLE}=${PRODUCTION_ENV_FILE} npm run ${name} -- …\n` +
        "  To create a new database here: npm run db:migrate",
    );
  }
  return databaseLabel(databaseUrl, dataDir);
}

function command<O extends Options>(
  name: string,
  usage: string,
  options: O,
  run: (values: Record<keyof O, string | boolean | undefined>, io: CommandIo) => Promise<string>,
  frame: FrameOptions = {},
): AdminCommand {
  return async (args) => {
    const notes: string[] = [];
    let failed = false;
    const io: CommandIo = { warn: (message) => void notes.push(`${name}: warning: ${message}\n`), fail: () => void (failed = true) };
    const stderr = (text: string) => notes.join("") + text;
    try {
      let values: Record<string, string | boolean | undefined>;
      try {
        ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }) as { values: Record<string, string | boolean | undefined> });
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      const database = findDatabase(name);
      getConfig();
      notes.push(`${name}: database: ${database}\n`);
      if (frame.migrate !== false) await migrate({ log: () => {} });
      const stdout = `${await run(values as Record<keyof O, string | boolean | undefined>, io)}\n`;
      return { code: failed ? 1 : 0, stdout, stderr: stderr("") };
    } catch (error: unknown) {
      if (error instanceof UsageError) return { code: 2, stdout: "", stderr: stderr(`${name}: ${error.message}\nusage: ${usage}\n`) };
      if (error instanceof Refused) return { code: 1, stdout: "", stderr: stderr(`${name}: ${error.message}\n`) };
      if (error instanceof ConfigError || error instanceof EnvFileError) return { code: 1, stdout: "", stderr: stderr(`${name}: ${error.message}\n`) };
      return { code: 1, stdout: "", stderr: stderr(`${name} failed: ${(error as Error)?.message ?? error}\n`) };
    }
  };
}

export function runCommand<O extends Options>(
  name: string,
  usage: string,
  options: O,
  run: (values: Record<keyof O, string | boolean | undefined>, io: CommandIo) => Promise<string>,
  frame: FrameOptions = {},
) {
  const main = command(name, usage, options, run, frame);
  const hook = (globalThis as { [IN_PROCESS_HOOK]?: (main: AdminCommand) => void })[IN_PROCESS_HOOK];
  if (hook) return hook(main);
  main(process.argv.slice(2))
    .then(({ code, stdout, stderr }) => {
      if (stdout) process.stdout.write(stdout);
      if (stderr) process.stderr.write(stderr);
      process.exitCode = code;
    })
    .finally(() => closeDb().catch(() => {}));
}

/** The --email option, required. */
export function requiredEmail(values: { email?: string | boolean }): string {
  if (typeof values.email !== "string" || !values.email.trim()) throw new UsageError("--email is required");
  return values.email;
}
