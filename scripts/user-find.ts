// npm run user:find -- --email E   |   npm run user:find -- --query Q [--page N]
import { findUser, searchUsers } from "../app/auth/accounts/admin.server";
import { Refused, runCommand, UsageError } from "./admin-cli";

const USAGE = "npm run user:find -- --email E | --query Q [--page N]";

runCommand("user:find", USAGE, { email: { type: "string" }, query: { type: "string" }, page: { type: "string" } }, async (values) => {
  const { email, query, page } = values;
  if ((typeof email === "string") === (typeof query === "string")) throw new UsageError("give either --email or --query");
  if (typeof email === "string") {
    if (page !== undefined) throw new UsageError("--page goes with --query");
    const user = await findUser(email);
    if (!user) throw new Refused(`no user with the address ${email}`);
    return [
      `email:         ${user.email}${user.emailVerified ? " (verified)" : ""}`,
      `name:          ${user.name ?? "-"}`,
      `id:            ${user.id}`,
      `role:          ${user.role}`,
      `disabled:      ${user.disabledAt ? `yes, since ${user.disabledAt.toISOString()}` : "no"}`,
      `ways in:       ${user.waysIn.join(", ") || "none"}`,
      `second factor: ${user.secondFactor ? "on" : "off"}`,
      `sessions:      ${user.sessions}`,
      `created:       ${user.createdAt.toISOString()}`,
    ].join("\n");
  }
  const pageNumber = page === undefined ? 1 : /^[1-9]\d{0,5}$/.test(String(page)) ? Number(page) : NaN;
  if (!Number.isInteger(pageNumber)) throw new UsageError("--page must be a whole number from 1");
  const listing = await searchUsers(String(query), pageNumber);
  if (listing.total === 0) throw new Refused(`no user whose address or name contains "${query}"`);
  const lines = listing.users.map((u) => `${u.email ?? "(no address)"}\t${u.name ?? "-"}\t${u.role}${u.disabled ? "\tdisabled" : ""}`);
  return [...lines, `page ${listing.page} of ${listing.pages} (${listing.total} user(s))`].join("\n");
});
