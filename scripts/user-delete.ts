// npm run user:delete -- --email E --yes
// Deletes the user as "Delete my account" does (app/auth/accounts/deletion.server.ts: the same
// operation the /admin pages call), with an audit event of source "cli". Without --yes it deletes
// nothing: it names who would be deleted and exits 2 (ADR 086) — a deletion cannot be undone, and
// a script that forgot the flag must not half-mean it. The security e-mail is queued, and sent
// from here when mail is configured (else by a running instance's sender).
import { deleteAccount } from "../app/auth/accounts/deletion.server";
import { findUser } from "../app/auth/accounts/admin.server";
import { getConfig } from "../app/auth/core/config.server";
import { authRequest } from "../app/auth/core/request.server";
import { accountDeletedHooks } from "../app/auth/signin/registry.server";
import { mailSenderIdle, stopMailSender } from "../app/mail/queue.server";
import { Refused, requiredEmail, runCommand, UsageError } from "./admin-cli";

const USAGE = "npm run user:delete -- --email E --yes";

runCommand("user:delete", USAGE, { email: { type: "string" }, yes: { type: "boolean" } }, async (values) => {
  const email = requiredEmail(values);
  const user = await findUser(email);
  if (!user) throw new Refused(`no user with the address ${email}`);
  if (values.yes !== true) {
    throw new UsageError(
      `this deletes ${user.email} (${user.waysIn.join(", ") || "no way in"}; ${user.sessions} session(s)) for good; add --yes to delete`,
    );
  }
  const config = getConfig();
  // The notice's links and host: the site's public origin (AUTH_URL), as a request to it would have them.
  const ar = authRequest(new Request(config.origin ?? "http://localhost/"), config);
  const result = await deleteAccount(user.id, { source: "cli" }, { hooks: accountDeletedHooks, ar });
  await mailSenderIdle();
  stopMailSender();
  if (!result.ok && result.reason === "last-admin") throw new Refused(`${email} is the last admin; make another user admin first`);
  if (!result.ok && result.reason === "last-owner") throw new Refused(`${email} is the only owner of an organization; name another owner there (or delete the organization) first`);
  if (!result.ok) throw new Refused(`no user with the address ${email}`);
  return `${result.email} deleted; ${result.sessionsEnded} session(s) ended`;
});
