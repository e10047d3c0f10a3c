// The frame every `npm run user:*` administration command shares (contract §18, ADR 077/078):
// parse the options, load the configuration, migrate, run one operation of
// app/auth/accounts/admin.server.ts (the code the /admin pages will call), print one clear
// message. Exit codes: 0 done, 1 not found or refused (or the configuration/database failed),
// 2 usage.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError, getConfig } from "../app/auth/core/config.server";
import { closeDb } from "../app/db/client.server";
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

function command<O extends Options>(
  name: string,
  usage: string,
  options: O,
  run: (values: Record<keyof O, string | boolean | undefined>) => Promise<string>,
): AdminCommand {
  return async (args) => {
    try {
      let values: Record<string, string | boolean | undefined>;
      try {
        ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }) as { values: Record<string, string | boolean | undefined> });
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      getConfig();
      await migrate({ log: () => {} });
      return { code: 0, stdout: `${await run(values as Record<keyof O, string | boolean | undefined>)}\n`, stderr: "" };
    } catch (error: unknown) {
      if (error instanceof UsageError) return { code: 2, stdout: "", stderr: `${name}: ${error.message}\nusage: ${usage}\n` };
      if (error instanceof Refused) return { code: 1, stdout: "", stderr: `${name}: ${error.message}\n` };
      if (error instanceof ConfigError) return { code: 1, stdout: "", stderr: `${error.message}\n` };
      return { code: 1, stdout: "", stderr: `${name} failed: ${(error as Error)?.message ?? error}\n` };
    }
  };
}

export function runCommand<O extends Options>(
  name: string,
  usage: string,
  options: O,
  run: (values: Record<keyof O, string | boolean | undefined>) => Promise<string>,
) {
  const main = command(name, usage, options, run);
  const hook = (globalThis as { [IN_PROCESS_HOOK]?: (main: AdminCommand) => void })[IN_PROCESS_HOOK];
  if (hook) return hook(main);
  main(process.argv.slice(2))
    .then(({ code, stdout, stderr }) => {
      if (stdout) process.stdout.write(stdout);
      if (stderr) process.stderr.write(stderr);
      process.exitCode = code;
    })
    .finally(() => closeDb());
}

/** The --email option, required. */
export function requiredEmail(values: { email?: string | boolean }): string {
  if (typeof values.email !== "string" || !values.email.trim()) throw new UsageError("--email is required");
  return values.email;
}
