// npm run user:sessions:end -- --email E
import { endUserSessions } from "../app/auth/accounts/admin.server";
import { Refused, requiredEmail, runCommand } from "./admin-cli";

runCommand("user:sessions:end", "npm run user:sessions:end -- --email E", { email: { type: "string" } }, async (values) => {
  const email = requiredEmail(values);
  const result = await endUserSessions(email, { source: "cli" });
  if (!result.ok) throw new Refused(`no user with the address ${email}`);
  return `${result.email}: ${result.sessionsEnded} session(s) ended on every instance`;
});
