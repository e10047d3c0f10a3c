// npm run db:cleanup — deletes expired sessions, e-mail links, rate-limit windows and revocations,
// and audit events older than AUTH_EVENT_RETENTION_DAYS (contract §12, docs/decisions/051); prints
// what it deleted. On PostgreSQL a run that finds another instance cleaning up skips (exit 0).
import { ConfigError, getConfig } from "../app/auth/core/config.server";
import { runCleanup } from "../app/auth/core/cleanup.server";
import { closeDb } from "../app/db/client.server";

async function main() {
  getConfig();
  const result = await runCleanup();
  if (!result.ran) {
    console.log("db:cleanup: another instance is cleaning up; nothing done");
    return;
  }
  const c = result.counts;
  console.log(
    [
      `deleted ${c.sessions} expired sessions`,
      `${c.verificationTokens} expired verification tokens`,
      `${c.limitCounters} ended rate-limit windows`,
      `${c.sessionCutoffs} expired revocations`,
      `${c.passkeyChallenges} spent passkey challenges`,
      `${c.sessionRevocations} expired session revocation notes`,
      `${c.mailQueue} sent or abandoned queued e-mails`,
      `${c.authEvents} auth events older than ${getConfig().authEventRetentionDays} days`,
    ].join(", "),
  );
}

main()
  .catch((error) => {
    console.error(error instanceof ConfigError ? error.message : `db:cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb().catch(() => {}));
