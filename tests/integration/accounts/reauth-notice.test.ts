// A change refused for want of a recent sign-in (ADR 058), as the page renders it: one notice,
// the refusal, with one "Sign in again" link — not the refusal plus the page's standing hint.
// Sent through React Router's own request handler, so the page renders the action's answer.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { envPerTest, useAppHandler } from "../../support/per-test.ts";

const handle = useAppHandler();

const setEnv = envPerTest();
afterEach(() => {
  resetRevocations();
});

function send(jar: CookieJar, path: string, body?: Record<string, string>) {
  return handle(
    new Request(ORIGIN + path, {
      method: body ? "POST" : "GET",
      headers: { Cookie: jar.header(), Origin: ORIGIN, ...(body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}) },
      body: body ? new URLSearchParams(body) : undefined,
    }),
  );
}

const signInAgainLinks = (html: string) => html.match(/<a [^>]*>Sign in again<\/a>/g) ?? [];

describe.each(["jwt", "database"] as const)(`the refusal of a change past the recent sign-in, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(async () => {
    await resetDatabase();
    setEnv({ AUTH_SESSION_STRATEGY: strategy });
  });

  it("a visitor whose sign-in is 11 minutes old and who changes the e-mail address sees one refusal with one sign-in-again link, and no success-coloured notice", async () => {
    const user = await createUser();
    const { jar, csrfToken } = await signIn(new CookieJar());
    await testDb().session.updateMany({ where: { userId: user.id }, data: { authenticatedAt: new Date(Date.now() - 11 * 60_000) } });
    // Before any change the page offers the sign-in again once, as a hint.
    const before = await (await send(jar, "/account")).text();
    expect(signInAgainLinks(before)).toHaveLength(1);

    const res = await send(jar, "/account", { csrfToken, intent: "change-email", email: "new@example.com" });
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(html).toContain("For your security, sign in again to make this change. Nothing was changed.");
    expect(html.includes('id="reauth-hint"'), "the standing hint is shown beside the refusal").toBe(false);
    expect(signInAgainLinks(html)).toHaveLength(1);
    expect(await testDb().verificationToken.count({ where: { identifier: "new@example.com" } })).toBe(0);
  });
});
