// npm run sessions:end-all -- --yes
// Ends every session of every user, of both strategies, on every instance (ASVS 7.4.5, ADR 107):
// the operation "sign out everywhere" runs for one user (revokeUserSessions), for everyone at
// once — a cut-off every instance applies to every cookie issued before it. Audited with source
// "cli". Without --yes it ends nothing: it says how many sessions it would end and exits 2, as
// user:delete does; everyone, the operator included, then signs in again.
import { endAllSessions, openSessionCount } from "../app/auth/accounts/admin.server";
import { runCommand, UsageError } from "./admin-cli";

const USAGE = "npm run sessions:end-all -- --yes";

runCommand("sessions:end-all", USAGE, { yes: { type: "boolean" } }, async (values) => {
  const open = await openSessionCount();
  if (values.yes !== true) throw new UsageError(`this ends every session of every user (${open} now) on every instance; add --yes to end them`);
  const { sessionsEnded } = await endAllSessions({ source: "cli" });
  return `every session ended on every instance (${sessionsEnded} open); every cookie issued until now is refused`;
});
