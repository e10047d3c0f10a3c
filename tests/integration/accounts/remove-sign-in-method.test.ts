// Removing a way to sign in is one atomic step (docs/decisions/026-removing-a-way-to-sign-in.md):
// however many removals race, the user keeps at least one way in, and the refused ones get the
// page's normal refusal, never a 500.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { removeSignInMethod } from "../../../app/auth/signin/methods.server.ts";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { hashPassword } from "../../../app/auth/credentials/password.server.ts";
import * as accountRoute from "../../../app/routes/account.tsx";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, post } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";

const RACERS = 20;

let idp: TestIdp;
beforeAll(async () => {
  idp = await startTestIdp();
  idp.configure({ AUTH_GITHUB_ID: "gh-client", AUTH_GITHUB_SECRET: "gh-secret" });
});
afterAll(() => idp?.stop());
beforeEach(() => resetDatabase());

/** Alice signed in through the IdP (account `oidc`), with no address: her accounts are her only ways in. */
async function aliceWithoutAddress() {
  const jar = new CookieJar();
  await signInThroughIdp(jar, ALICE);
  const { userId } = await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } });
  await testDb().user.update({ where: { id: userId }, data: { email: null } });
  return { jar, userId };
}

async function addAccount(userId: string, provider: string) {
  await testDb().account.create({ data: { userId, provider, type: "oauth", providerAccountId: `${provider}-${userId}` } });
}

describe(`removing a way to sign in (${dbLabel})`, () => {
  test(`${RACERS} concurrent unlinks of a two-account user leave one account; the others get 409 or 404`, async () => {
    const { jar, userId } = await aliceWithoutAddress();
    await addAccount(userId, "github");
    const csrfToken = await fetchCsrf(jar);
    const unlink = (provider: string) =>
      callRoute(accountRoute.action, post("/account", { csrfToken, intent: "unlink-account", provider }, { jar }));

    const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => unlink(i % 2 ? "github" : "oidc")));

    const remaining = await testDb().account.findMany({ where: { userId } });
    expect(remaining).toHaveLength(1);
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 302)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 302 && s !== 409 && s !== 404)).toEqual([]);
    for (const res of answers.filter((r) => r.status === 409)) {
      expect(((await res.json()) as { formError: string }).formError).toMatch(/only way to sign in/);
    }
    expect(await testDb().authEvent.count({ where: { type: "account-unlinked", userId } })).toBe(1);
  });

  test(`${RACERS} concurrent removals of a password and an account leave one of them`, async () => {
    const { userId } = await aliceWithoutAddress();
    await testDb().password.create({ data: { userId, hash: await hashPassword("alice-local-password") } });
    const config = getConfig();

    const results = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        removeSignInMethod(config, userId, i % 2 ? { kind: "password" } : { kind: "account", provider: "oidc" }),
      ),
    );

    const left = (await testDb().account.count({ where: { userId } })) + (await testDb().password.count({ where: { userId } }));
    expect(left).toBe(1);
    expect(results.filter((r) => r === "removed")).toHaveLength(1);
    expect(results.filter((r) => r !== "removed" && r !== "last-method" && r !== "not-found")).toEqual([]);
  });

  test("an account at a provider that is not configured is not a way to sign in", async () => {
    const { jar, userId } = await aliceWithoutAddress();
    await addAccount(userId, "gitlab");
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(accountRoute.action, post("/account", { csrfToken, intent: "unlink-account", provider: "oidc" }, { jar }));
    expect(res.status).toBe(409);
    expect(await testDb().account.count({ where: { userId } })).toBe(2);
  });

  test("a password is removed while another way remains, and not when it is the last", async () => {
    const { userId } = await aliceWithoutAddress();
    await testDb().password.create({ data: { userId, hash: await hashPassword("alice-local-password") } });
    const config = getConfig();
    expect(await removeSignInMethod(config, userId, { kind: "password" })).toBe("removed");
    expect(await removeSignInMethod(config, userId, { kind: "password" })).toBe("not-found");
    await testDb().password.create({ data: { userId, hash: await hashPassword("alice-local-password") } });
    expect(await removeSignInMethod(config, userId, { kind: "account", provider: "oidc" })).toBe("removed");
    expect(await removeSignInMethod(config, userId, { kind: "password" })).toBe("last-method");
    expect(await testDb().password.count({ where: { userId } })).toBe(1);
  });
});
