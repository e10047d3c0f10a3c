// npm run user:role -- --email E --role ROLE
import { setRole } from "../app/auth/accounts/admin.server";
import { roleNames } from "../app/auth/accounts/roles.server";
import { Refused, requiredEmail, runCommand, UsageError } from "./admin-cli";

// The roles are `user`, `admin` and the app's own (app/auth.config.ts).
runCommand("user:role", `npm run user:role -- --email E --role ${roleNames().join("|")}`, { email: { type: "string" }, role: { type: "string" } }, async (values) => {
  const email = requiredEmail(values);
  const role = values.role;
  if (typeof role !== "string" || !roleNames().includes(role)) throw new UsageError(`--role must be one of ${roleNames().join(", ")}`);
  const result = await setRole(email, role, { source: "cli" });
  if (!result.ok) {
    if (result.reason === "last-admin") throw new Refused(`${email} is the last admin; make another user admin first`);
    throw new Refused(`no user with the address ${email}`);
  }
  return result.changed ? `${result.email}: role ${result.previous} → ${result.role}` : `${result.email} already has the role ${result.role}; nothing changed`;
});
