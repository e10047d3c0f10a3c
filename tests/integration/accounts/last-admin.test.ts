// Issue 31 item 8 (ADR 077, ADR 086): the last administrator cannot delete their own
// account — not from /account (form and JSON), not with `user:delete` — and the check and the
// deletion hold one lock with every role change, so two deletions or a deletion and a demotion of
// the last two administrators at once cannot both pass: exactly one is refused.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setRole } from "../../../app/auth/accounts/admin.server.ts";
import { deleteAccount } from "../../../app/auth/accounts/deletion.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { accountDeletedHooks } from "../../../app/auth/signin/registry.server.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import * as account from "../../../app/routes/account.tsx";
import { createUser, signIn } from "../../support/auth.ts";
import { runInProcess } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, post } from "../../support/http.ts";
import { configure } from "../email/helpers.ts";

afterEach(() => mailSenderIdle());
beforeEach(() => resetDatabase());

async function admin(email: string) {
  const user = await createUser(email, "Admin");
  await testDb().user.update({ where: { id: user.id }, data: { role: "admin" } });
  return user;
}

async function intent(jar: CookieJar, fields: Record<string, string>, { json = false } = {}) {
  const page = await callRoute(account.loader, get("/account", { jar }));
  jar.apply(page);
  const { csrfToken } = (await page.json()) as { csrfToken: string };
  const request = post("/account", { csrfToken, ...fields }, { jar, headers: json ? { "X-Auth-Return-Redirect": "1" } : {} });
  const [reauth, lifecycle] = account.middleware;
  return (await reauth!({ request } as never, () => lifecycle!({ request } as never, () => callRoute(account.action, request)) as never)) as Response;
}

const remove = (userId: string) => deleteAccount(userId, { source: "cli" }, { hooks: accountDeletedHooks, ar: authRequest(get("/")) });
const admins = () => testDb().user.count({ where: { role: "admin" } });

describe.each(["jwt", "database"] as const)(`the last administrator, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => configure({ AUTH_SESSION_STRATEGY: strategy }));

  it("the last administrator pressing 'Delete my account' is refused with the reason (form and JSON) and keeps the account", async () => {
    const user = await admin("root@example.com");
    const { jar } = await signIn(new CookieJar(), "root@example.com");
    const form = await intent(jar, { intent: "account-delete", confirm: "DELETE" });
    expect(form.status).toBe(409);
    expect(await form.json()).toMatchObject({ formError: "The last administrator cannot be deleted: make someone else an administrator first." });
    const json = await intent(jar, { intent: "account-delete", confirm: "DELETE" }, { json: true });
    expect(json.status).toBe(409);
    expect(await json.json()).toEqual({ error: "LastAdmin", message: "The last administrator cannot be deleted: make someone else an administrator first." });
    expect(await testDb().user.count({ where: { id: user.id } })).toBe(1);
    // With another administrator, the same button deletes.
    await admin("second@example.com");
    expect((await intent(jar, { intent: "account-delete", confirm: "DELETE" }, { json: true })).status).toBe(200);
    expect(await testDb().user.count({ where: { id: user.id } })).toBe(0);
  });
});

describe(`the last administrator (${dbLabel})`, () => {
  it("an operator running user:delete on the last administrator is refused (exit 1) and nothing is deleted", async () => {
    await admin("root@example.com");
    const result = await runInProcess("scripts/user-delete.ts", ["--email", "root@example.com", "--yes"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("root@example.com is the last admin");
    expect(await admins()).toBe(1);
  });

  it("the last two administrators deleting themselves at the same moment: exactly one is refused, one administrator is left", async () => {
    const [a, b] = [await admin("a@example.com"), await admin("b@example.com")];
    const results = await Promise.all([remove(a.id), remove(b.id)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.reason === "last-admin")).toHaveLength(1);
    expect(await admins()).toBe(1);
  });

  it("one of the last two administrators demoted while the other is deleted at the same moment: exactly one is refused", async () => {
    for (let round = 0; round < 3; round++) {
      await testDb().user.deleteMany();
      const [a, b] = [await admin("a@example.com"), await admin("b@example.com")];
      const [demoted, deleted] = await Promise.all([setRole({ id: a.id }, "user", { source: "cli" }), remove(b.id)]);
      expect([demoted.ok, deleted.ok].filter(Boolean)).toHaveLength(1);
      expect(await admins()).toBe(1);
    }
  });
});
