// The dev bootstrap's line about e-mail: where sign-in links go when you run `npm run dev`.
import { getConfig } from "../auth/core/config.server";
import { outboxDir } from "./outbox.server";

export async function mailDevStep(print: (line: string) => void) {
  const config = getConfig();
  if (config.email) {
    const server = new URL(config.email.server);
    print(`[vestibule] e-mail: SMTP ${server.hostname}${server.port ? `:${server.port}` : ""} (AUTH_EMAIL_SERVER)`);
  } else {
    print(`[vestibule] e-mail: dev outbox in ${outboxDir(config.dataDir)}, shown at /dev/outbox; links are also printed here`);
  }
}
