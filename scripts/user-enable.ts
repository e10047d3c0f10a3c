// npm run user:enable -- --email E
import { enableUser } from "../app/auth/accounts/admin.server";
import { Refused, requiredEmail, runCommand } from "./admin-cli";

runCommand("user:enable", "npm run user:enable -- --email E", { email: { type: "string" } }, async (values) => {
  const email = requiredEmail(values);
  const result = await enableUser(email, { source: "cli" });
  if (!result.ok) throw new Refused(`no user with the address ${email}`);
  return result.changed ? `${result.email} enabled; they can sign in again (ended sessions stay ended)` : `${result.email} was not disabled; nothing changed`;
});
