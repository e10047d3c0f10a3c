// A sibling subdomain can set a cookie for the parent domain with one of our names; the browser
// then sends both, the longer Path first. A name sent more than once reads as absent, so a planted
// cookie can never choose whose session (or OAuth state, or CSRF token) we read.
import { beforeEach, describe, expect, it } from "vitest";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as callbackRoute from "../../../app/routes/auth/callback";
import { createUser, PASSWORD, signIn, withEnv } from "../../support/auth";
import { dbLabel, resetDatabase } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http";

beforeEach(async () => {
  await resetDatabase();
});

const sessionOf = async (cookie: string) =>
  (await (await callRoute(sessionRoute.loader, new Request("http://localhost:3000/auth/session", { headers: { Cookie: cookie } }))).json()) as {
    user?: { email: string };
  } | null;

describe(`duplicated cookies (${dbLabel})`, () => {
  for (const strategy of ["jwt", "database"] as const) {
    it(`${strategy}: the session cookie twice (attacker's first, then the victim's) reads as signed out, as neither session`, async () => {
      const undo = withEnv({ AUTH_SESSION_STRATEGY: strategy });
      try {
        await createUser("victim@example.com");
        await createUser("attacker@example.com");
        const victim = (await signIn(new CookieJar(), "victim@example.com")).jar.get("authjs.session-token")!;
        const attacker = (await signIn(new CookieJar(), "attacker@example.com")).jar.get("authjs.session-token")!;
        expect((await sessionOf(`authjs.session-token=${victim}`))?.user?.email).toBe("victim@example.com");
        expect(await sessionOf(`authjs.session-token=${attacker}; authjs.session-token=${victim}`)).toBeNull();
        expect(await sessionOf(`authjs.session-token=${victim}; authjs.session-token=${attacker}`)).toBeNull();
        expect(await sessionOf(`authjs.session-token=${victim}; authjs.session-token=${victim}`)).toBeNull();
        // A planted first chunk beside the victim's plain cookie: a jwt could be read from chunks, so
        // that is as ambiguous as a duplicate; database tokens are never chunked, so chunks are ignored.
        const chunked = await sessionOf(`authjs.session-token.0=${attacker}; authjs.session-token=${victim}`);
        if (strategy === "jwt") expect(chunked).toBeNull();
        else expect(chunked?.user?.email).toBe("victim@example.com");
      } finally {
        undo();
      }
    });
  }

  it("a duplicated CSRF cookie (http, no __Host- prefix) is no CSRF cookie: the sign-in is refused with MissingCSRF", async () => {
    await createUser();
    const mine = new CookieJar();
    await fetchCsrf(mine);
    // The attacker's own token and cookie, planted ahead of the browser's: a forged form carries it.
    const planted = new CookieJar();
    const csrfToken = await fetchCsrf(planted);
    const cookie = `authjs.csrf-token=${planted.get("authjs.csrf-token")}; authjs.csrf-token=${mine.get("authjs.csrf-token")}`;
    const res = await callRoute(
      callbackRoute.action,
      post("/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: PASSWORD }, { headers: { Cookie: cookie } }),
      { provider: "credentials" },
    );
    expect(res.headers.get("Location")).toBe("http://localhost:3000/auth/signin?error=MissingCSRF");
  });

  it("our own sign-in and session read set each name at most once, and the session cookie in one form only", async () => {
    await createUser();
    const { jar } = await signIn();
    const names = jar.names();
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((n) => n.startsWith("authjs.session-token"))).toEqual(["authjs.session-token"]);
    const again = await callRoute(sessionRoute.loader, get("/auth/session", { jar }));
    const written = again.headers.getSetCookie().map((c) => c.slice(0, c.indexOf("=")));
    expect(new Set(written).size).toBe(written.length);
  });
});
