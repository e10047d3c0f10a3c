// Issue 31, finding 10 (ADR 103): re-authentication continues the session under a new id so that a
// copy of the old cookie ends with the old id — but a jwt cookie that names no live session row
// (no `sid`: the older cookie shape; or a sid whose row is gone) has no id to end. Before the
// renewed cookie is issued, a per-user cut-off is written: every cookie of that user issued up to
// then that names no live row is refused, on every instance. Cookies with a live row (the owner's
// other devices) and other users' cookies stay.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { encodeJwt } from "../../../app/auth/core/jwt.server.ts";
import { refreshRevocations, resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { sessionOf } from "../../support/oauth-flow.ts";
import { ageSession, reauthenticate, sessionIdOf } from "../../support/reauth.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";

const smtp = useSmtpSink(null);
afterEach(() => mailSenderIdle());

const COOKIE = "authjs.session-token";

function copyOf(jar: CookieJar): CookieJar {
  const copy = new CookieJar();
  for (const name of jar.names()) copy.set(name, jar.get(name)!);
  return copy;
}

/**
 * A browser holding a jwt cookie of `user` minted as older versions did: no `sid` at all, or (with
 * `sid`) one whose session row was never written.
 */
async function olderCookie(user: { id: string; email: string | null; name: string | null }, sid?: string): Promise<CookieJar> {
  const claims = { name: user.name, email: user.email, picture: null, sub: user.id, ...(sid ? { sid } : {}) };
  const token = await encodeJwt({ payload: claims, secrets: getConfig().secrets, salt: COOKIE, maxAge: 30 * 86_400 });
  return new CookieJar({ [COOKIE]: token });
}

describe(`a thief's copy of a jwt cookie that names no live session row, after the owner re-authenticates (${dbLabel})`, () => {
  beforeEach(() => {
    resetRevocations();
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: "jwt", AUTH_CREDENTIALS: "true" }));
  });

  for (const shape of ["without sid", "naming no session row"] as const) {
    it(`a thief's copy of a cookie ${shape} is refused after the owner re-authenticates, on this instance and a fresh one; the owner's new cookie works; the owner's other device and another user are untouched`, async () => {
      const ada = await createUser("ada@example.com", "Ada");
      const bob = await createUser("bob@example.com", "Bob");
      const owner = await olderCookie(ada, shape === "without sid" ? undefined : "ghost-session-of-an-older-version");
      const stolen = copyOf(owner);
      const bobs = await olderCookie(bob);
      // The owner's phone: signed in the usual way (its row lives).
      const { jar: phone } = await signIn(new CookieJar(), "ada@example.com");
      expect((await sessionOf(copyOf(stolen)))?.user.email).toBe("ada@example.com");

      const res = await reauthenticate(owner, { password: PASSWORD });
      expect(res).toHaveRedirect("/account");
      expect(res).toHaveSessionCookie();
      expect(await sessionIdOf(owner)).not.toBeNull();

      expect(await sessionOf(copyOf(stolen))).toBeNull();
      expect((await sessionOf(owner))?.user.email).toBe("ada@example.com");
      expect((await sessionOf(phone))?.user.email).toBe("ada@example.com");
      expect((await sessionOf(bobs))?.user.email).toBe("bob@example.com");

      // Another instance (a process that starts now) reads the cut-off from the database.
      resetRevocations();
      await refreshRevocations();
      expect(await sessionOf(copyOf(stolen))).toBeNull();
      expect((await sessionOf(owner))?.user.email).toBe("ada@example.com");
      expect((await sessionOf(phone))?.user.email).toBe("ada@example.com");
      expect((await sessionOf(bobs))?.user.email).toBe("bob@example.com");
    });
  }
});

describe(`a thief's copy of a database session cookie, after the owner re-authenticates (${dbLabel})`, () => {
  beforeEach(() => {
    resetRevocations();
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: "database", AUTH_CREDENTIALS: "true" }));
  });

  it("the copy is refused (its row is gone); the owner's new cookie works; another user is untouched", async () => {
    await createUser("ada@example.com", "Ada");
    await createUser("bob@example.com", "Bob");
    const { jar: owner } = await signIn(new CookieJar(), "ada@example.com");
    const { jar: bob } = await signIn(new CookieJar(), "bob@example.com");
    await ageSession(owner, 11);
    const thief = copyOf(owner);
    expect(await reauthenticate(owner, { password: PASSWORD })).toHaveRedirect("/account");
    await refreshRevocations();
    expect(await sessionOf(thief)).toBeNull();
    expect((await sessionOf(owner))?.user.email).toBe("ada@example.com");
    expect((await sessionOf(bob))?.user.email).toBe("bob@example.com");
  });
});
