// npm run user:find -- --email E   |   npm run user:find -- --query Q [--after ID]
// --query is the /admin console's search (searchUserPage, ADR 085): part of an address, or part of
// a name in any case and with or without accents, newest first, a page at a time; --after takes
// the cursor the page before printed.
import { ADMIN_USERS_PER_PAGE, findUser, searchUserPage } from "../app/auth/accounts/admin.server";
import { Refused, runCommand, UsageError } from "./admin-cli";

const USAGE = "npm run user:find -- --email E | --query Q [--after ID]";

runCommand("user:find", USAGE, { email: { type: "string" }, query: { type: "string" }, after: { type: "string" } }, async (values) => {
  const { email, query, after } = values;
  if ((typeof email === "string") === (typeof query === "string")) throw new UsageError("give either --email or --query");
  if (typeof email === "string") {
    if (after !== undefined) throw new UsageError("--after goes with --query");
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
  if (after !== undefined && (typeof after !== "string" || !/^[a-z0-9]{1,64}$/i.test(after))) throw new UsageError("--after takes the id a previous page printed");
  const listing = await searchUserPage(String(query), typeof after === "string" ? after : null);
  if (listing.users.length === 0) throw new Refused(after ? `no more users match "${query}"` : `no user whose address or name contains "${query}"`);
  const lines = listing.users.map((u) => `${u.email ?? "(no address)"}\t${u.name ?? "-"}\t${u.role}${u.disabled ? "\tdisabled" : ""}`);
  const more = listing.next
    ? `${listing.users.length} user(s), newest first; the next ${ADMIN_USERS_PER_PAGE}: npm run user:find -- --query ${JSON.stringify(String(query))} --after ${listing.next}`
    : `${listing.users.length} user(s)${after ? " more" : ""}`;
  return [...lines, more].join("\n");
});
