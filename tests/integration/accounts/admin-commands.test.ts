// The user:* administration commands (contract §18, ADR 078) run as an operator runs them — a
// process of their own, through tsx — against this file's database: a clear message, exit code 0
// done / 1 not found or refused / 2 usage, and an audit event with source "cli" for each change.
import { beforeEach, describe, expect, it } from "vitest";
import { setRole } from "../../../app/auth/accounts/admin.server.ts";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { runInProcess, runScript } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { sessionOf } from "../../support/oauth-flow.ts";
import { upsertCredentialsUser } from "../../../app/auth/credentials/users.server.ts";

beforeEach(() => resetDatabase());

async function eventsOf(type: string) {
  return (await testDb().authEvent.findMany({ where: { type }, orderBy: { at: "asc" } })).map((e) => ({ userId: e.userId, detail: JSON.parse(e.detail ?? "{}") }));
}

describe(`npm run user:disable / user:enable / user:sessions:end / user:find (${dbLabel})`, { timeout: 180_000 }, () => {
  it("an operator disables a user (sessions end), enables them, and ends their sessions", async () => {
    const ada = await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar());

    const disabled = await runScript("scripts/user-disable.ts", ["--email", "ada@example.com"]);
    expect(disabled).toMatchObject({ code: 0 });
    expect(disabled.stdout).toContain("ada@example.com disabled; 1 session(s) ended");
    expect(await sessionOf(jar)).toBeNull();
    expect((await testDb().user.findUniqueOrThrow({ where: { id: ada.id } })).disabledAt).not.toBeNull();

    const enabled = await runScript("scripts/user-enable.ts", ["--email", "ada@example.com"]);
    expect(enabled).toMatchObject({ code: 0 });
    expect(enabled.stdout).toContain("enabled");
    const { jar: again } = await signIn(new CookieJar());
    expect((await sessionOf(again))?.user.email).toBe("ada@example.com");

    const ended = await runScript("scripts/user-sessions-end.ts", ["--email", "ada@example.com"]);
    expect(ended).toMatchObject({ code: 0 });
    expect(ended.stdout).toContain("1 session(s) ended");

    expect(await eventsOf("user-disabled")).toEqual([{ userId: ada.id, detail: { count: 1, source: "cli" } }]);
    expect(await eventsOf("user-enabled")).toEqual([{ userId: ada.id, detail: { source: "cli" } }]);
    expect(await eventsOf("sessions-ended")).toEqual([{ userId: ada.id, detail: { count: 1, source: "cli" } }]);
  });

  it("answers an unknown address with exit 1 and bad usage with exit 2", async () => {
    const results = await Promise.all([
      runScript("scripts/user-disable.ts", ["--email", "nobody@example.com"]),
      runScript("scripts/user-sessions-end.ts", ["--email", "nobody@example.com"]),
      runScript("scripts/user-enable.ts", []),
      runScript("scripts/user-find.ts", ["--email", "a@example.com", "--query", "a"]),
    ]);
    expect(results.map((r) => r.code)).toEqual([1, 1, 2, 2]);
    expect(results[0]!.stderr).toContain("user:disable: no user with the address nobody@example.com");
    expect(results[2]!.stderr).toContain("usage: npm run user:enable -- --email E");
    expect(results[3]!.stderr).toContain("give either --email or --query");
    expect(await testDb().authEvent.count()).toBe(0);
  });

  it("user:find prints one user's role, state, ways in and sessions; --query finds by part of an address or name, paged", async () => {
    await createUser("ada@example.com", "Ada Lovelace");
    await setRole("ada@example.com", "admin", { source: "cli" });
    await signIn(new CookieJar());
    await signIn(new CookieJar());
    for (let i = 0; i < 22; i++) await upsertCredentialsUser({ email: `user${String(i).padStart(2, "0")}@lovelace.test`, password: PASSWORD });

    // One lookup as the operator runs it; the other searches run the same command in this
    // process (ADR 088).
    const [one, firstPage, secondPage, byName, none] = await Promise.all([
      runScript("scripts/user-find.ts", ["--email", "ADA@example.com"]),
      runInProcess("scripts/user-find.ts", ["--query", "LOVELACE"]),
      runInProcess("scripts/user-find.ts", ["--query", "lovelace", "--page", "2"]),
      runInProcess("scripts/user-find.ts", ["--query", "Ada Love"]),
      runInProcess("scripts/user-find.ts", ["--query", "zzz"]),
    ]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/role:\s+admin/);
    expect(one.stdout).toMatch(/disabled:\s+no/);
    expect(one.stdout).toMatch(/ways in:\s+password/);
    expect(one.stdout).toMatch(/sessions:\s+2/);
    // 23 matches (22 addresses and one name), 20 a page.
    expect(firstPage.code).toBe(0);
    expect(firstPage.stdout.trim().split("\n")).toHaveLength(21);
    expect(firstPage.stdout).toContain("page 1 of 2 (23 user(s))");
    expect(secondPage.stdout).toContain("page 2 of 2 (23 user(s))");
    expect(secondPage.stdout.trim().split("\n")).toHaveLength(4);
    expect(byName.stdout).toContain("ada@example.com\tAda Lovelace\tadmin");
    expect(none.code).toBe(1);
  });
});
