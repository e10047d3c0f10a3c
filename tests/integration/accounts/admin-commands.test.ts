// The user:* administration commands (ADR 078) run as an operator runs them — a
// process of their own, through tsx — against this file's database: a clear message, exit code 0
// done / 1 not found or refused / 2 usage, and an audit event with source "cli" for each change.
import { beforeEach, describe, expect, it } from "vitest";
import { setRole } from "../../../app/auth/accounts/admin.server.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { productionEnvFile, runInProcess, runNpm, runScript } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { sessionOf } from "../../support/oauth-flow.ts";

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

  it("user:find prints one user's role, state, ways in and sessions; --query finds by part of an address or name, paged by cursor", async () => {
    await createUser("ada@example.com", "Ada Lovelace");
    await setRole("ada@example.com", "admin", { source: "cli" });
    await signIn(new CookieJar());
    await signIn(new CookieJar());
    // 52 more matches by address (no password needed to be found): with Ada's name, 53, 50 a page.
    for (let i = 0; i < 52; i++) await testDb().user.create({ data: { email: `user${String(i).padStart(2, "0")}@lovelace.test` } });

    // One lookup as the operator runs it; the other searches run the same command in this
    // process (ADR 088).
    const [one, firstPage, byName, none, badCursor] = await Promise.all([
      runScript("scripts/user-find.ts", ["--email", "ADA@example.com"]),
      runInProcess("scripts/user-find.ts", ["--query", "LOVELACE"]),
      runInProcess("scripts/user-find.ts", ["--query", "Ada Love"]),
      runInProcess("scripts/user-find.ts", ["--query", "zzz"]),
      runInProcess("scripts/user-find.ts", ["--query", "a", "--after", "x'; --"]),
    ]);
    const cursor = / --after (\S+)$/.exec(firstPage.stdout.trim())?.[1];
    expect(cursor).toBeTruthy();
    const secondPage = await runInProcess("scripts/user-find.ts", ["--query", "lovelace", "--after", cursor!]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/role:\s+admin/);
    expect(one.stdout).toMatch(/disabled:\s+no/);
    expect(one.stdout).toMatch(/ways in:\s+password/);
    expect(one.stdout).toMatch(/sessions:\s+2/);
    // 53 matches, 50 a page, newest first: the second page has the other 3, Ada (the oldest) last.
    expect(firstPage.code).toBe(0);
    expect(firstPage.stdout.trim().split("\n")).toHaveLength(51);
    expect(firstPage.stdout).toContain('50 user(s), newest first; the next 50: npm run user:find -- --query "LOVELACE" --after ');
    expect(secondPage.code).toBe(0);
    expect(secondPage.stdout.trim().split("\n")).toEqual([expect.stringContaining("@lovelace.test"), expect.stringContaining("@lovelace.test"), "ada@example.com\tAda Lovelace\tadmin", "3 user(s) more"]);
    expect(byName.stdout).toContain("ada@example.com\tAda Lovelace\tadmin");
    expect(none.code).toBe(1);
    expect(badCursor).toMatchObject({ code: 2 });
  });

  it("an operator finds a user by a part of their name as /admin does: any case, any accents (the name search of the admin console)", async () => {
    await createUser("jose@example.com", "José Álvarez Núñez");
    await createUser("zoe@example.com", "ZOË O'BRIEN");
    await createUser("other@example.com", "Someone Else");
    const file = productionEnvFile();
    const [accentless, upper, address] = await Promise.all([
      runNpm("user:find", ["--query", "alvarez nu"], { VESTIBULE_ENV_FILE: file }),
      runNpm("user:find", ["--query", "zoë o'b"], { VESTIBULE_ENV_FILE: file }),
      runNpm("user:find", ["--query", "JOSE@"], { VESTIBULE_ENV_FILE: file }),
    ]);
    expect(accentless).toMatchObject({ code: 0 });
    expect(accentless.stdout).toContain("jose@example.com\tJosé Álvarez Núñez\tuser");
    expect(accentless.stdout).not.toContain("other@example.com");
    expect(upper.stdout).toContain("zoe@example.com\tZOË O'BRIEN\tuser");
    expect(address.stdout).toContain("jose@example.com");
  });
});
