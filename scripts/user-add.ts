// npm run user:add -- --email E [--password P | password on stdin] [--name N]
import { parseArgs } from "node:util";
import { ConfigError, getConfig } from "../app/auth/core/config.server";
import { closeDb } from "../app/db/client.server";
import { migrate } from "../app/db/migrate.server";
import { upsertCredentialsUser } from "../app/auth/credentials/users.server";
import { ZodError } from "zod";

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\r?\n$/, "");
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: { email: { type: "string" }, password: { type: "string" }, name: { type: "string" } },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!values.email) throw new UsageError("--email is required");
  const password = values.password ?? (await readStdin());
  if (!password) throw new UsageError("give the password with --password or on standard input");
  getConfig();
  await migrate({ log: () => {} });
  const { user, created } = await upsertCredentialsUser({ email: values.email, password, name: values.name });
  console.log(`${created ? "created" : "updated"} ${user.email} (id ${user.id})`);
}

class UsageError extends Error {}

main()
  .catch((error) => {
    if (error instanceof UsageError) console.error(`user:add: ${error.message}\nusage: npm run user:add -- --email E [--password P] [--name N]`);
    else if (error instanceof ZodError) console.error(`user:add: ${error.issues.map((i) => i.message).join("; ")}`);
    else if (error instanceof ConfigError) console.error(error.message);
    else console.error(`user:add failed: ${error?.message ?? error}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb());
