// npm run user:disable -- --email E
import { disableUser } from "../app/auth/accounts/admin.server";
import { Refused, requiredEmail, runCommand } from "./admin-cli";

runCommand("user:disable", "npm run user:disable -- --email E", { email: { type: "string" } }, async (values) => {
  const email = requiredEmail(values);
  const result = await disableUser(email, { source: "cli" });
  if (!result.ok) throw new Refused(`no user with the address ${email}`);
  const ended = `${result.sessionsEnded} session(s) ended`;
  return result.changed ? `${result.email} disabled; ${ended}` : `${result.email} was already disabled; ${ended}`;
});
