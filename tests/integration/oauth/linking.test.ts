// Account linking (ADR 013): an e-mail address never links by itself; a signed-in
// visitor links a new provider account to themselves; a known account always means its own user.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { createSession } from "../../../app/auth/core/session.server.ts";
import { toSessionUser } from "../../../app/auth/accounts/users.server.ts";
import { upsertCredentialsUser } from "../../../app/auth/credentials/users.server.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, ORIGIN } from "../../support/http.ts";
import * as account from "../../../app/routes/account.tsx";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import { ALICE, BOB, startTestIdp, visitIdp, type TestIdp } from "../../support/idp.ts";
import { checkCookieChanges, deliver, sessionOf, signInThroughIdp, startSignIn } from "../../support/oauth-flow.ts";

let idp: TestIdp;

beforeAll(async () => {
  idp = await startTestIdp();
});
afterAll(() => idp?.stop());

/** A browser signed in as `user` (a real session cookie of the configured strategy). */
async function signedInJar(user: { id: string; name: string | null; email: string | null; image: string | null }) {
  const jar = new CookieJar();
  jar.apply(await createSession(authRequest(get("/")), toSessionUser(user)));
  return jar;
}

for (const strategy of ["jwt", "database"] as const) {
  describe(`account linking, ${strategy} sessions (${dbLabel})`, () => {
    beforeEach(async () => {
      idp.configure({ AUTH_SESSION_STRATEGY: strategy });
      expect(getConfig().sessionStrategy).toBe(strategy);
      await resetDatabase();
    });

    test("signed out, the provider's e-mail belongs to an existing user: OAuthAccountNotLinked, nothing linked or created", async () => {
      const { user: existing } = await upsertCredentialsUser({ email: ALICE.email, password: "existing-password" });
      const jar = new CookieJar();
      const { res } = await signInThroughIdp(jar, ALICE);
      expect(res).toHaveRedirect(`${ORIGIN}/auth/signin?error=OAuthAccountNotLinked`);
      expect(res).not.toHaveSessionCookie();
      expect(checkCookieChanges(res).expired).toEqual(["authjs.nonce", "authjs.pkce.code_verifier", "authjs.state"]);
      expect(await sessionOf(jar)).toBeNull();
      expect(await testDb().account.count()).toBe(0);
      expect(await testDb().user.count()).toBe(1);
      expect((await testDb().user.findUniqueOrThrow({ where: { id: existing.id } })).email).toBe(ALICE.email);
    });

    test("an unverified provider e-mail of an existing user is refused the same way", async () => {
      await upsertCredentialsUser({ email: BOB.email, password: "existing-password" });
      const { res } = await signInThroughIdp(new CookieJar(), BOB);
      expect(res).toHaveErrorRedirect("OAuthAccountNotLinked");
      expect(await testDb().account.count()).toBe(0);
    });

    test("signed in as that user, the same sign-in links the account; afterwards it signs in on its own", async () => {
      const { user } = await upsertCredentialsUser({ email: ALICE.email, password: "existing-password", name: "Alice Local" });
      const jar = await signedInJar(user);
      const { res } = await signInThroughIdp(jar, ALICE, { callbackUrl: "/account" });
      // Linking is not a new user: straight to the callback URL, in the session the user had (ADR 058).
      expect(res).toHaveRedirect(`${ORIGIN}/account`);
      expect(res).not.toHaveSessionCookie();
      expect((await sessionOf(jar))?.user.email).toBe(ALICE.email);
      const account = await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } });
      expect(account).toMatchObject({ userId: user.id, providerAccountId: ALICE.sub });
      expect(await testDb().authEvent.count({ where: { type: "account-linked", userId: user.id } })).toBe(1);

      const later = new CookieJar();
      const again = await signInThroughIdp(later, ALICE);
      expect(again.res).toHaveRedirect(`${ORIGIN}/`);
      expect((await sessionOf(later))?.user).toMatchObject({ email: ALICE.email, name: "Alice Local" });
      expect(await testDb().user.count()).toBe(1);
    });

    test("signed in as someone else, a new provider account links to the signed-in user whatever its e-mail", async () => {
      const { user } = await upsertCredentialsUser({ email: "carol@example.com", password: "carol-password" });
      const { res } = await signInThroughIdp(await signedInJar(user), BOB);
      expect(res).toHaveRedirect(`${ORIGIN}/`);
      expect(await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } })).toMatchObject({ userId: user.id, providerAccountId: BOB.sub });
      expect(await testDb().user.count()).toBe(1);
    });

    test("an account already linked to another user cannot be taken over by a signed-in visitor, who is told so on /account in her language", async () => {
      await signInThroughIdp(new CookieJar(), ALICE);
      const owner = await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } });
      const { user: mallory } = await upsertCredentialsUser({ email: "mallory@example.com", password: "mallory-password" });
      const jar = await signedInJar(mallory);
      const { res } = await signInThroughIdp(jar, ALICE);
      // Signed in, she stays so: back on /account, whose notice says the account is someone else's
      // (not the sign-in page's "You are signed in … Continue" beside a red refusal).
      expect(res).toHaveRedirect(`${ORIGIN}/account?updated=link-taken`);
      expect(res).not.toHaveSessionCookie();
      expect((await sessionOf(jar))?.user.email).toBe("mallory@example.com");
      for (const locale of ["en", "de", "fr", "ar"] as const) {
        const page = await runWithLocale(locale, () => callRoute(account.loader, get("/account?updated=link-taken", { jar })));
        expect(((await page.json()) as { notice: string | null }).notice).toBe(runWithLocale(locale, () => t("account.noticeLinkTaken")));
      }
      expect(await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } })).toMatchObject({ id: owner.id, userId: owner.userId });
    });

    test("signing in again while signed in as the account's own user is a plain sign-in", async () => {
      const jar = new CookieJar();
      await signInThroughIdp(jar, ALICE);
      const { res } = await signInThroughIdp(jar, ALICE, { callbackUrl: "/account" });
      expect(res).toHaveRedirect(`${ORIGIN}/account`);
      expect(await testDb().account.count()).toBe(1);
      expect(await testDb().user.count()).toBe(1);
    });
  });
}

describe(`a brand-new account arriving twice at once (${dbLabel})`, () => {
  beforeEach(async () => {
    idp.configure({ AUTH_SESSION_STRATEGY: "jwt" });
    await resetDatabase();
  });

  test("two callbacks for the same new user race: one user, one account, both signed in", async () => {
    const jar = new CookieJar();
    const idpJar = new CookieJar();
    const a = await startSignIn(jar);
    const b = await startSignIn(jar);
    const answers = [await visitIdp(a.headers.get("Location")!, ALICE, idpJar), await visitIdp(b.headers.get("Location")!, ALICE, idpJar)];
    const [resA, resB] = await Promise.all(answers.map((answer) => deliver(jar, answer)));
    expect(resA).toHaveSessionCookie();
    expect(resB).toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(1);
    expect(await testDb().account.count()).toBe(1);
    // Exactly one of them created the user.
    const targets = [resA, resB].map((r) => new URL(r.headers.get("Location")!).pathname).sort();
    expect(targets).toEqual(["/", "/welcome"]);
  });
});
