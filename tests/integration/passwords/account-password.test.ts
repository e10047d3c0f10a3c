// The /account password intents of through the real route action, on both
// session strategies: password-set within 10 minutes of the sign-in, password-change (the current
// password counts as a credentials attempt; other sessions end), password-remove (never the last
// way to sign in).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as account from "../../../app/routes/account.tsx";
import * as sessionRoute from "../../../app/routes/auth/session";
import { createUser, PASSWORD, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { accountRefusal } from "../../support/account-refusal.ts";

const NEW_PASSWORD = "velvet lantern orbit";

async function email(jar: CookieJar): Promise<string | null> {
  const res = await callRoute(sessionRoute.loader, get("/auth/session", { jar }));
  jar.apply(res);
  return ((await res.json()) as { user?: { email: string } } | null)?.user?.email ?? null;
}

async function intent(jar: CookieJar, fields: Record<string, string>, options: { csrf?: string | null } = {}) {
  const csrfToken = options.csrf === undefined ? await fetchCsrf(jar) : options.csrf;
  const body: Record<string, string> = { ...fields };
  if (csrfToken !== null) body.csrfToken = csrfToken;
  const res = await callRoute(account.action, post("/account", body, { jar }));
  jar.apply(res);
  return res;
}

// A refusal of what was typed sends a browser back to the page, which shows it (tests/support/account-refusal.ts).
const refusal = accountRefusal;

for (const strategy of ["jwt", "database"] as const) {
  describe(`/account password intents (${dbLabel}, ${strategy} sessions)`, () => {
    let undo: () => void;
    beforeEach(async () => {
      await resetDatabase();
      undo = withEnv({ AUTH_SESSION_STRATEGY: strategy });
    });
    afterEach(() => {
      vi.useRealTimers();
      undo();
    });

    it("password-change: a wrong current password is a 400 on currentPassword and a counted failure; past the limit even the right one is refused", async () => {
      await createUser();
      const { jar } = await signIn();
      // This browser signed in, so it carries the account's device cookie: its own budget of 10 (section 10).
      for (let i = 0; i < 10; i++) {
        const res = await intent(jar, { intent: "password-change", currentPassword: `wrong-${i}`, password: NEW_PASSWORD });
        expect(res.status).toBe(303);
        expect((await refusal(res, jar)).fieldErrors).toEqual({ currentPassword: "That is not your current password." });
      }
      expect(await testDb().authEvent.count({ where: { type: "signin-failed" } })).toBe(10);
      const sixth = await intent(jar, { intent: "password-change", currentPassword: PASSWORD, password: NEW_PASSWORD });
      expect(sixth.status).toBe(429);
      expect(sixth.headers.get("Retry-After")).toMatch(/^\d+$/);
      expect((await refusal(sixth, jar)).fieldErrors.currentPassword).toMatch(/^Too many attempts\. Try again in \d+ minutes?\.$/);
      // Nothing changed: the old password still signs in (another browser has its own budget).
      expect((await signIn(new CookieJar())).res).toHaveSessionCookie();
    });

    it("password-change: the current password is proved first (ADR 103); a refused new password after it is a 400 on password", async () => {
      await createUser();
      const { jar } = await signIn();
      const res = await intent(jar, { intent: "password-change", currentPassword: PASSWORD, password: "passwordpassword" });
      expect(res.status).toBe(303);
      expect((await refusal(res, jar)).fieldErrors.password).toMatch(/too common/);
      expect(await testDb().authEvent.count({ where: { type: "signin-failed" } })).toBe(0);
      // A wrong current password is refused before the new one is judged: nothing said of its rules.
      const short = await intent(jar, { intent: "password-change", currentPassword: "whatever", password: "short" });
      expect((await refusal(short, jar)).fieldErrors).toEqual({ currentPassword: "That is not your current password." });
      expect(await testDb().authEvent.count({ where: { type: "signin-failed" } })).toBe(1);
    });

    it("password-change: success keeps this session, ends every other one, and the new password signs in (the owner in two tabs and on a phone)", async () => {
      await createUser();
      const { jar: laptop } = await signIn();
      // More than a second between the sign-in and the change, as in real use (a cut-off is per second).
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const { jar: phone } = await signIn();
      const secondTab = laptop; // a second tab shares the browser's cookies
      const res = await intent(laptop, { intent: "password-change", currentPassword: PASSWORD, password: NEW_PASSWORD });
      expect(res).toHaveRedirect("/account?updated=password-changed#password-notice");
      expect(await email(laptop)).toBe("ada@example.com");
      expect(await email(secondTab)).toBe("ada@example.com");
      expect(await email(phone)).toBeNull();
      expect((await signIn(new CookieJar(), "ada@example.com", PASSWORD)).res).toHaveErrorRedirect("CredentialsSignin");
      expect((await signIn(new CookieJar(), "ada@example.com", NEW_PASSWORD)).res).toHaveSessionCookie();
      expect(await testDb().authEvent.count({ where: { type: "password-changed" } })).toBe(1);
      // The page after the redirect says so.
      const page = await callRoute(account.loader, get("/account?updated=password-changed", { jar: laptop }));
      expect(((await page.json()) as { notice: string }).notice).toMatch(/password was changed/);
    });

    it("password-change without a CSRF token changes nothing", async () => {
      await createUser();
      const { jar } = await signIn();
      const before = await testDb().password.findFirstOrThrow();
      const res = await intent(jar, { intent: "password-change", currentPassword: PASSWORD, password: NEW_PASSWORD }, { csrf: null });
      expect(res.status).toBe(403);
      expect((await testDb().password.findFirstOrThrow()).hash).toBe(before.hash);
    });

    it("password-set: right after the sign-in it sets one; a sign-in older than AUTH_REAUTH_MAX_AGE is a 403 asking to sign in again, nothing set", async () => {
      const user = await createUser();
      const { jar } = await signIn();
      await testDb().password.deleteMany({ where: { userId: user.id } });

      // The sign-in 11 minutes ago (the default window is 10).
      await testDb().session.updateMany({ where: { userId: user.id }, data: { authenticatedAt: new Date(Date.now() - 11 * 60 * 1000) } });
      const late = await intent(jar, { intent: "password-set", password: NEW_PASSWORD });
      expect(late.status).toBe(403);
      const body = (await late.json()) as { formError: string; reauthUrl: string };
      expect(body.formError).toMatch(/sign in again/);
      expect(body.reauthUrl).toBe("http://localhost:3000/auth/reauth?callbackUrl=%2Faccount");
      expect(await testDb().password.count()).toBe(0);
      await testDb().session.updateMany({ where: { userId: user.id }, data: { authenticatedAt: new Date() } });

      const weak = await intent(jar, { intent: "password-set", password: "ada@example.com" });
      expect(weak.status).toBe(303);
      expect((await refusal(weak, jar)).fieldErrors.password).toMatch(/e-mail address/);

      const ok = await intent(jar, { intent: "password-set", password: NEW_PASSWORD });
      expect(ok).toHaveRedirect("/account?updated=password-set#password-notice");
      expect((await signIn(new CookieJar(), "ada@example.com", NEW_PASSWORD)).res).toHaveSessionCookie();
      // Once set, password-set is refused: change it instead.
      const again = await intent(jar, { intent: "password-set", password: "another fine passphrase" });
      expect(again.status).toBe(400);
      expect((await refusal(again, jar)).fieldErrors.password).toMatch(/already have a password/);
    });

    it("password-set counts from the sign-in, not from the session's last roll", async () => {
      const user = await createUser();
      const { jar } = await signIn();
      await testDb().password.deleteMany({ where: { userId: user.id } });
      vi.useFakeTimers({ toFake: ["Date"] });
      // Two days later the session has rolled (it is used daily), but its sign-in is old.
      vi.setSystemTime(Date.now() + 2 * 24 * 3600 * 1000);
      expect(await email(jar)).toBe("ada@example.com");
      const res = await intent(jar, { intent: "password-set", password: NEW_PASSWORD });
      expect(res.status).toBe(403);
    });

    it("password-remove: needs the current password, and is refused when the password is the last way to sign in", async () => {
      const user = await createUser();
      const { jar } = await signIn();
      // Without an address (so no e-mail sign-in) and no linked account, the password is the only way in.
      await testDb().user.update({ where: { id: user.id }, data: { email: null } });
      const wrong = await intent(jar, { intent: "password-remove", currentPassword: "nope-nope" });
      expect(wrong.status).toBe(303);
      expect((await refusal(wrong, jar)).fieldErrors).toEqual({ currentPassword: "That is not your current password." });
      const last = await intent(jar, { intent: "password-remove", currentPassword: PASSWORD });
      expect(last.status).toBe(409);
      expect((await refusal(last, jar)).fieldErrors.currentPassword).toMatch(/only way to sign in/);
      expect(await testDb().password.count()).toBe(1);

      // With an address (e-mail sign-in is offered), it goes.
      await testDb().user.update({ where: { id: user.id }, data: { email: "ada@example.com" } });
      const removed = await intent(jar, { intent: "password-remove", currentPassword: PASSWORD });
      expect(removed).toHaveRedirect("/account?updated=password-removed#password-notice");
      expect(await testDb().password.count()).toBe(0);
    });

    it("password-remove: two tabs at once against a second way in remove it once and never leave none", async () => {
      const user = await createUser();
      const { jar } = await signIn();
      await testDb().user.update({ where: { id: user.id }, data: { email: null } });
      await testDb().account.create({ data: { userId: user.id, provider: "gone", type: "oauth", providerAccountId: "x" } });
      // The linked account's provider is not configured: it is no way in, so the password stays.
      const answers = await Promise.all([0, 1].map(() => intent(jar, { intent: "password-remove", currentPassword: PASSWORD })));
      expect(answers.map((r) => r.status).sort()).toEqual([409, 409]);
      expect(await testDb().password.count()).toBe(1);
    });
  });
}
