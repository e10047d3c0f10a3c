// NUL (U+0000) in what a visitor sends: PostgreSQL refuses it in text (22021 invalid byte
// sequence), so a NUL that reached a query was a 500 there. Bodies refuse NUL in any string as a
// bad request; ids are checked against their alphabet before any query. Run on both databases.
import { beforeEach, describe, expect, it } from "vitest";
import * as accountRoute from "../../../app/routes/account";
import * as accountEmailRoute from "../../../app/routes/account-email";
import * as callbackEmailRoute from "../../../app/routes/auth/callback-email";
import * as signinRoute from "../../../app/routes/auth/signin";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as sessionRoute from "../../../app/routes/auth/session";
import { createUser, PASSWORD, signIn, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http";

beforeEach(async () => {
  await resetDatabase();
});

describe(`NUL in a request body (${dbLabel})`, () => {
  for (const json of [false, true]) {
    describe(json ? "JSON body" : "form body", () => {
      it.each([
        ["revoke-session", { intent: "revoke-session", sessionId: "a\u0000b" }],
        ["update-profile", { intent: "update-profile", name: "Ada\u0000" }],
        ["unlink-account", { intent: "unlink-account", provider: "oidc\u0000" }],
        ["change-email", { intent: "change-email", email: "new\u0000@example.com" }],
      ])("POST /account %s → 400, nothing changed", async (_intent, fields) => {
        const undo = withEnv({ AUTH_SESSION_STRATEGY: "database" });
        try {
          const user = await createUser();
          const { jar, csrfToken } = await signIn();
          const before = await testDb().session.count();
          const res = await callRoute(accountRoute.action, post("/account", { csrfToken, ...fields }, { jar, json }));
          expect(res.status).toBe(400);
          expect(await testDb().session.count()).toBe(before);
          expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).name).toBe("Ada");
        } finally {
          undo();
        }
      });

      it("POST /auth/callback/credentials with NUL in the address → a refusal, not an error", async () => {
        await createUser();
        const jar = new CookieJar();
        const csrfToken = await fetchCsrf(jar);
        const res = await callRoute(
          callbackRoute.action,
          post("/auth/callback/credentials", { csrfToken, email: "ada\u0000@example.com", password: PASSWORD }, { jar, json }),
          { provider: "credentials" },
        );
        expect(res.status).toBeLessThan(500);
        expect(res.headers.get("Location") ?? "").not.toContain("Configuration");
        expect(res).not.toHaveSessionCookie();
      });

      it("POST /auth/session with NUL in the update → 400", async () => {
        await createUser();
        const { jar, csrfToken } = await signIn();
        const data = { name: "Ada\u0000" };
        const res = await callRoute(sessionRoute.action, post("/auth/session", json ? { csrfToken, data } : { csrfToken, data: JSON.stringify(data) }, { jar, json }));
        expect(res.status).toBe(400);
      });
    });
  }
});

describe(`ids are checked against their alphabet before any query (${dbLabel})`, () => {
  it.each(["a b", "a\u0001b", "a%00b", "ä", "x".repeat(65), "a/b", "../a"])("revoke-session sessionId %j → 400", async (sessionId) => {
    const undo = withEnv({ AUTH_SESSION_STRATEGY: "database" });
    try {
      await createUser();
      const { jar, csrfToken } = await signIn();
      const before = await testDb().session.count();
      const res = await callRoute(accountRoute.action, post("/account", { csrfToken, intent: "revoke-session", sessionId }, { jar }));
      expect(res.status).toBe(400);
      expect(await testDb().session.count()).toBe(before);
    } finally {
      undo();
    }
  });

  it.each(["oidc\u0001", "a b", "ä", "x".repeat(65), "<b>"])("unlink-account provider %j → 400", async (provider) => {
    await createUser();
    const { jar, csrfToken } = await signIn();
    const res = await callRoute(accountRoute.action, post("/account", { csrfToken, intent: "unlink-account", provider }, { jar }));
    expect(res.status).toBe(400);
  });
});

describe(`NUL in a query string (${dbLabel})`, () => {
  it.each([
    ["GET /auth/callback/email", callbackEmailRoute, "/auth/callback/email?token=t%00&email=ada%00%40example.com&callbackUrl=%2F%00"],
    ["GET /account/email", accountEmailRoute, "/account/email?token=t%00&email=new%00%40example.com"],
    ["GET /auth/signin", signinRoute, "/auth/signin?callbackUrl=%2F%00&error=%00"],
  ])("%s → below 500", async (_name, route, path) => {
    await createUser();
    const { jar } = await signIn();
    const res = await callRoute(route.loader, get(path, { jar }));
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get("Location") ?? "").not.toContain("Configuration");
  });
});
