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

export function runCommand<O extends Options>(
  name: string,
  usage: string,
  options: O,
  run: (values: Record<keyof O, string | boolean | undefined>) => Promise<string>,
) {
  const main = async () => {
    let values: Record<string, string | boolean | undefined>;
    try {
      ({ values } = parseArgs({ options, strict: true, allowPositionals: false }) as { values: Record<string, string | boolean | undefined> });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    getConfig();
    await migrate({ log: () => {} });
    console.log(await run(values as Record<keyof O, string | boolean | undefined>));
  };
  main()
    .catch((error: unknown) => {
      if (error instanceof UsageError) {
        console.error(`${name}: ${error.message}\nusage: ${usage}`);
        process.exitCode = 2;
        return;
      }
      if (error instanceof Refused) console.error(`${name}: ${error.message}`);
      else if (error instanceof ConfigError) console.error(error.message);
      else console.error(`${name} failed: ${(error as Error)?.message ?? error}`);
      process.exitCode = 1;
    })
    .finally(() => closeDb());
}

/** The --email option, required. */
export function requiredEmail(values: { email?: string | boolean }): string {
  if (typeof values.email !== "string" || !values.email.trim()) throw new UsageError("--email is required");
  return values.email;
}
