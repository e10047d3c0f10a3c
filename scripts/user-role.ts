// npm run user:role -- --email E --role admin|user
import { setRole } from "../app/auth/accounts/admin.server";
import { ROLES } from "../app/auth/accounts/roles.server";
import { Refused, requiredEmail, runCommand, UsageError } from "./admin-cli";

runCommand("user:role", "npm run user:role -- --email E --role admin|user", { email: { type: "string" }, role: { type: "string" } }, async (values) => {
  const email = requiredEmail(values);
  const role = values.role;
  if (typeof role !== "string" || !(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
  const result = await setRole(email, role, { source: "cli" });
  if (!result.ok) {
    if (result.reason === "last-admin") throw new Refused(`${email} is the last admin; make another user admin first`);
    throw new Refused(`no user with the address ${email}`);
  }
  return result.changed ? `${result.email}: role ${result.previous} → ${result.role}` : `${result.email} already has the role ${result.role}; nothing changed`;
});
