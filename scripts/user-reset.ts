// npm run user:reset -- --email E
// Sends the user the password-reset e-mail the forgotten-password form sends (the /admin action's
// code path): the user chooses the new password, the operator never sees one. The link points at
// AUTH_URL, the site's public address, which this command therefore needs.
import { sendPasswordResetFor } from "../app/auth/passwords";
import { authRequest } from "../app/auth/core/request.server";
import { getConfig } from "../app/auth/core/config.server";
import { Refused, requiredEmail, runCommand } from "./admin-cli";

runCommand("user:reset", "npm run user:reset -- --email E", { email: { type: "string" } }, async (values) => {
  const email = requiredEmail(values);
  const config = getConfig();
  if (!config.origin) throw new Refused("AUTH_URL is not set: the e-mail's link needs the site's public address");
  const ar = authRequest(new Request(`${config.origin}${config.basePath}/forgot-password`, { headers: { "User-Agent": "npm run user:reset" } }), config);
  const result = await sendPasswordResetFor(ar, email, { source: "cli" });
  if (result.ok) return `${result.email}: a password-reset e-mail was sent`;
  if (result.reason === "not-sent") throw new Refused(`the e-mail to ${email} could not be sent (is AUTH_EMAIL_SERVER set and reachable?)`);
  throw new Refused(`no user with the address ${email}`);
});
