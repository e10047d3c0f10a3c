// npm run db:cleanup — deletes expired sessions, e-mail links, rate-limit windows and revocations,
// and audit events older than AUTH_EVENT_RETENTION_DAYS (docs/decisions/051); prints
// what it deleted. On PostgreSQL a run that finds another instance cleaning up skips (exit 0).
// A maintenance command (scripts/admin-cli.ts, ADR 107): it finds the database, never creates one.
import { getConfig } from "../app/auth/core/config.server";
import { runCleanup } from "../app/auth/core/cleanup.server";
import { runCommand } from "./admin-cli";

runCommand(
  "db:cleanup",
  "npm run db:cleanup",
  {},
  async () => {
    const result = await runCleanup();
    if (!result.ran) return "db:cleanup: another instance is cleaning up; nothing done";
    const c = result.counts;
    return [
      `deleted ${c.sessions} expired sessions`,
      `${c.verificationTokens} expired verification tokens`,
      `${c.limitCounters} ended rate-limit windows`,
      `${c.sessionCutoffs} expired revocations`,
      `${c.passkeyChallenges} spent passkey challenges`,
      `${c.sessionRevocations} expired session revocation notes`,
      `${c.mailQueue} sent or abandoned queued e-mails`,
      `${c.oauthPayloads} expired OAuth codes, tokens and grants`,
      `${c.oauthSigningKeys} retired OAuth signing keys`,
      `${c.oauthRegistrations} unused OAuth registrations`,
      `${c.backchannelLogouts} sent or given-up back-channel logouts`,
      `${c.oauthSessionApps} expired records of apps in sessions`,
      `${c.authEvents} auth events older than ${getConfig().authEventRetentionDays} days`,
    ].join(", ");
  },
  { migrate: false },
);
