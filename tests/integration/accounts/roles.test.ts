// Roles (ADR 077): `npm run user:role` run as an operator runs it, against this file's database,
// and requireRole(request, "admin", { hide: true }) (~/auth, as /admin uses it) answering everyone
// but a signed-in admin with the ordinary 404.
import { beforeEach, describe, expect, it } from "vitest";
import { setRole } from "../../../app/auth/accounts/admin.server.ts";
import * as notFound from "../../../app/routes/not-found.tsx";
import { requireRole } from "../../../app/auth/index.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { runInProcess, runScript } from "../../support/cli.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, get, routeArgs } from "../../support/http.ts";

beforeEach(() => resetDatabase());

/** The operator's way: a process of its own, through tsx (args, exit code, messages). */
const role = (...args: string[]) => runScript("scripts/user-role.ts", args);
/** The same command in this process, for the repeats with other data (ADR 088). */
const roleHere = (...args: string[]) => runInProcess("scripts/user-role.ts", args);

async function roleOf(email: string) {
  return (await testDb().user.findUniqueOrThrow({ where: { email } })).role;
}

/** What requireRole(…, "admin", { hide: true }) throws or returns, as status and body. */
async function adminCheck(jar: CookieJar) {
  try {
    const admin = await requireRole(get("/admin", { jar }), "admin", { hide: true });
    return { status: 200, userId: admin.user.id };
  } catch (thrown) {
    const answer = thrown as Response;
    return { status: answer.status, body: await answer.text() };
  }
}

/** The not-found route's answer to an unknown URL, as status and body. */
function notFoundAnswer() {
  try {
    notFound.loader(routeArgs(get("/no-such-page")) as never);
  } catch (thrown) {
    const answer = thrown as { init: { status: number }; data: unknown };
    return { status: answer.init.status, body: answer.data };
  }
  throw new Error("not-found loader returned");
}

// The first of each kind of answer (done, not found, usage) is a process of its own (a few seconds
// each on a busy machine); the repeats with other data run the same command in this process.
describe(`npm run user:role (${dbLabel})`, { timeout: 120_000 }, () => {
  it("an operator makes a user admin and back, with an audit event from the command line", async () => {
    const ada = await createUser("ada@example.com", "Ada");
    await createUser("grace@example.com", "Grace");
    expect(await roleOf("ada@example.com")).toBe("user");

    const promoted = await role("--email", "Ada@Example.com", "--role", "admin");
    expect(promoted).toMatchObject({ code: 0 });
    expect(promoted.stdout).toContain("ada@example.com: role user → admin");
    expect(await roleOf("ada@example.com")).toBe("admin");

    const again = await roleHere("--email", "ada@example.com", "--role", "admin");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing changed");

    expect((await roleHere("--email", "grace@example.com", "--role", "admin")).code).toBe(0);
    expect((await roleHere("--email", "ada@example.com", "--role", "user")).code).toBe(0);
    expect(await roleOf("ada@example.com")).toBe("user");

    const events = await testDb().authEvent.findMany({ where: { type: "role-changed", userId: ada.id }, orderBy: { at: "asc" } });
    expect(events.map((e) => JSON.parse(e.detail!))).toEqual([
      { role: "admin", previous: "user", source: "cli" },
      { role: "user", previous: "admin", source: "cli" },
    ]);
  });

  it("refuses to demote the last admin (exit 1), and says so", async () => {
    await createUser("ada@example.com", "Ada");
    await setRole("ada@example.com", "admin", { source: "cli" });
    const refused = await roleHere("--email", "ada@example.com", "--role", "user");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("last admin");
    expect(await roleOf("ada@example.com")).toBe("admin");
  });

  it("answers an unknown address with exit 1 and bad usage with exit 2, changing nothing", async () => {
    await createUser("ada@example.com", "Ada");
    const unknown = await role("--email", "nobody@example.com", "--role", "admin");
    expect(unknown).toMatchObject({ code: 1 });
    expect(unknown.stderr).toContain("no user with the address nobody@example.com");
    for (const [i, args] of [["--email", "ada@example.com", "--role", "root"], ["--role", "admin"], ["--email", "ada@example.com", "--role", "admin", "--force"]].entries()) {
      const r = await (i === 0 ? role : roleHere)(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("usage: npm run user:role");
    }
    expect(await roleOf("ada@example.com")).toBe("user");
    expect(await testDb().authEvent.count({ where: { type: "role-changed" } })).toBe(0);
  });

  it("two demotions at once leave one admin", async () => {
    await createUser("ada@example.com", "Ada");
    await createUser("grace@example.com", "Grace");
    await setRole("ada@example.com", "admin", { source: "cli" });
    await setRole("grace@example.com", "admin", { source: "cli" });
    const results = await Promise.all([setRole("ada@example.com", "user", { source: "cli" }), setRole("grace@example.com", "user", { source: "cli" })]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.reason === "last-admin")).toHaveLength(1);
    expect(await testDb().user.count({ where: { role: "admin" } })).toBe(1);
  });
});

describe(`requireRole(request, "admin", { hide: true }) (${dbLabel})`, () => {
  it("answers a signed-out visitor and a signed-in user with the ordinary 404, and lets an admin through", async () => {
    const ordinary = notFoundAnswer();
    expect(await adminCheck(new CookieJar())).toEqual(ordinary);

    const ada = await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    expect(await adminCheck(jar)).toEqual(ordinary);

    await setRole("ada@example.com", "admin", { source: "cli" });
    expect(await adminCheck(jar)).toEqual({ status: 200, userId: ada.id });
  });

  it("an admin whose role is taken away gets the 404 at the next request, without signing in again", async () => {
    await createUser("ada@example.com", "Ada");
    await createUser("grace@example.com", "Grace");
    await setRole("ada@example.com", "admin", { source: "cli" });
    await setRole("grace@example.com", "admin", { source: "cli" });
    const { jar } = await signIn(new CookieJar(), "ada@example.com");
    expect(await adminCheck(jar)).toMatchObject({ status: 200 });
    await setRole("ada@example.com", "user", { source: "cli" });
    expect(await adminCheck(jar)).toEqual(notFoundAnswer());
  });
});

