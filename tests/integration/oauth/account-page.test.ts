// /account's "Ways to sign in": linked providers, the providers left to link, and unlinking only
// while another way to sign in remains.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { introspectToken, openToken } from "../../../app/auth/oauth/tokens.server.ts";
import { hashPassword } from "../../../app/auth/credentials/password.server.ts";
import * as accountRoute from "../../../app/routes/account.tsx";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";
import { signIn } from "../../support/auth.ts";
import { renderPage } from "../../support/render-page.tsx";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";

let idp: TestIdp;

beforeAll(async () => {
  idp = await startTestIdp();
  idp.configure({ AUTH_GITHUB_ID: "gh-client", AUTH_GITHUB_SECRET: "gh-secret" });
});
afterAll(() => idp?.stop());
beforeEach(() => resetDatabase());

type Ways = {
  password: boolean;
  emailLink: boolean;
  linked: { provider: string; name: string; canUnlink: boolean }[];
  linkable: { id: string; name: string; signinUrl: string }[];
  notice: string | null;
};

async function ways(jar: CookieJar, path = "/account"): Promise<Ways> {
  const res = await callRoute(accountRoute.loader, get(path, { jar }));
  expect(res.status).toBe(200);
  return ((await res.json()) as { ways: Ways }).ways;
}

async function unlink(jar: CookieJar, provider: string) {
  const csrfToken = await fetchCsrf(jar);
  return callRoute(accountRoute.action, post("/account", { csrfToken, intent: "unlink-account", provider }, { jar }));
}

async function aliceSignedIn() {
  const jar = new CookieJar();
  await signInThroughIdp(jar, ALICE);
  const account = await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } });
  return { jar, account };
}

describe(`/account ways to sign in (${dbLabel})`, () => {
  test("lists the linked provider and the ones left to link, with their sign-in URLs", async () => {
    const { jar } = await aliceSignedIn();
    const w = await ways(jar);
    expect(w.linked).toEqual([{ provider: "oidc", name: "Test IdP", canUnlink: w.emailLink }]);
    expect(w.linkable).toEqual([{ id: "github", name: "GitHub", signinUrl: "/auth/signin/github" }]);
    expect(w.password).toBe(false);
  });

  test("the only way to sign in cannot be removed (409), and nothing changes", async () => {
    const { jar, account } = await aliceSignedIn();
    // No address, no password: the provider is the only way in.
    await testDb().user.update({ where: { id: account.userId }, data: { email: null } });
    expect((await ways(jar)).linked).toEqual([{ provider: "oidc", name: "Test IdP", canUnlink: false }]);
    const res = await unlink(jar, "oidc");
    expect(res.status).toBe(409);
    expect(((await res.json()) as { formError: string }).formError).toMatch(/only way to sign in/);
    expect(await testDb().account.count()).toBe(1);
  });

  test("with a password as well, the provider can be removed; its tokens are revoked first", async () => {
    const { jar: viaProvider, account } = await aliceSignedIn();
    await testDb().password.create({ data: { userId: account.userId, hash: await hashPassword("alice-local-password") } });
    const refreshToken = (await openToken(account.refreshToken, { provider: "oidc", providerAccountId: ALICE.sub, field: "refreshToken" }))!;
    expect((await ways(viaProvider)).linked[0]!.canUnlink).toBe(true);

    // Removed from a browser that signed in with the provider: that session ends with the account,
    // and the browser is sent to sign in.
    const res = await unlink(viaProvider, "oidc");
    expect(res).toHaveRedirect("/auth/signin?notice=SignInMethodRemoved&callbackUrl=%2Faccount");
    expect(await testDb().account.count()).toBe(0);
    expect((await introspectToken("oidc", refreshToken, "refresh_token")).active).toBe(false);
    expect(await testDb().authEvent.count({ where: { type: "account-unlinked", userId: account.userId } })).toBe(1);

    const jar = (await signIn(new CookieJar(), ALICE.email, "alice-local-password")).jar;
    const after = await ways(jar, "/account?updated=unlinked&provider=oidc");
    expect(after.linked).toEqual([]);
    expect(after.password).toBe(true);
    expect(after.notice).toBe("Test IdP was removed from your ways to sign in.");
    expect(after.linkable.map((p) => p.id)).toEqual(["oidc", "github"]);
  });

  test("an attacker's link /account?updated=linked&provider=<their words> shows none of their words: only a configured provider the account really has (or had, for 'unlinked') is named", async () => {
    const { jar } = await aliceSignedIn();
    const hostile = encodeURIComponent("Evil. Your account is locked: call +1 555 0100 or visit evil.example");
    expect((await ways(jar, `/account?updated=linked&provider=${hostile}`)).notice).toBeNull();
    expect((await ways(jar, `/account?updated=unlinked&provider=${hostile}`)).notice).toBeNull();
    // A configured provider that is not linked is not announced as linked, nor a linked one as removed.
    expect((await ways(jar, "/account?updated=linked&provider=github")).notice).toBeNull();
    expect((await ways(jar, "/account?updated=unlinked&provider=oidc")).notice).toBeNull();
    expect((await ways(jar, "/account?updated=linked&provider=oidc")).notice).toBe("You can now sign in with Test IdP.");
  });

  test("unlinking a provider that is not linked → 404", async () => {
    const { jar } = await aliceSignedIn();
    expect((await unlink(jar, "github")).status).toBe(404);
    expect(await testDb().account.count()).toBe(1);
  });

  test("unlinking needs the CSRF token", async () => {
    const { jar } = await aliceSignedIn();
    const res = await callRoute(accountRoute.action, post("/account", { csrfToken: "f".repeat(64), intent: "unlink-account", provider: "oidc" }, { jar }));
    expect(res.status).toBe(403);
    expect(await testDb().account.count()).toBe(1);
  });

  test("the link buttons size to their words like the page's other buttons, and link back to the section (fr, en)", async () => {
    const { jar } = await aliceSignedIn();
    const res = await callRoute(accountRoute.loader, get("/account", { jar }));
    const page = await res.json();
    for (const locale of ["fr", "en"] as const) {
      const html = renderPage(accountRoute, "/account", locale, { loaderData: page });
      const section = html.slice(html.indexOf('id="ways-in"'));
      const link = /<form[^>]*action="\/auth\/signin\/github"[\s\S]*?<button[^>]*class="([^"]+)"[^>]*>([^<]+)</.exec(section);
      expect(link?.[1]).toBe("button inline");
      expect(link?.[2]).toBe(runWithLocale(locale, () => t("methods.link", { name: "GitHub" })));
      expect(section).toContain(`value="/account?updated=linked&amp;provider=github#ways-in"`);
    }
  });
});
