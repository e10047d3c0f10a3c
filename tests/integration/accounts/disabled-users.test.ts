// Disabled users (ADR 078): every sign-in method refuses a disabled user with the
// answer it gives to credentials that do not sign in, every session they hold ends (both
// strategies, announced to the other instances), and enabling restores sign-in but no session.
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { disableUser, enableUser, endUserSessions } from "../../../app/auth/accounts/admin.server.ts";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { REVOCATION_CHANNEL, resetRevocations } from "../../../app/auth/core/revocation.server.ts";
import { resetSessionCache } from "../../../app/auth/core/session-cache.server.ts";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as callbackEmail from "../../../app/routes/auth/callback-email.tsx";
import * as optionsRoute from "../../../app/routes/auth/webauthn-options";
import { createUser, PASSWORD, signIn, withEnv } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp, sessionOf } from "../../support/oauth-flow.ts";
import { SoftwareAuthenticator } from "../../support/passkey-authenticator.ts";
import { linkIn, type ReceivedMessage } from "../../support/smtp-sink.ts";
import { csrfFor, openLink, requestLink, useSmtpSink } from "../email/helpers.ts";
import { advance, codeAt, enrolled, firstFactor, isRefusal, submitCode, useStepClock } from "../two-factor/helpers.ts";

const CLI = { source: "cli" } as const;
const smtp = useSmtpSink();
let idp: TestIdp;
beforeAll(async () => {
  idp = await startTestIdp();
});
afterAll(() => idp?.stop());
beforeEach(() => {
  idp.configure();
  resetRevocations();
});
afterEach(() => vi.useRealTimers());

/** What a browser sees of an answer: status, where it is sent, and whether a session starts. */
async function seen(res: Response) {
  const body = res.headers.get("Content-Type")?.includes("json") ? await res.text() : null;
  const session = res.headers.getSetCookie().some((c) => /session-token=[^;]+/.test(c) && !/Max-Age=0/i.test(c));
  return { status: res.status, location: res.headers.get("Location"), body, session };
}

/** Each attempt from its own client address: a refusal near the pause says how many tries are left (ADR 160), which would tell two attempts apart by their order alone. */
let clients = 0;
async function passwordSignIn(email: string, password: string, { json = false } = {}) {
  const jar = new CookieJar();
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/credentials", { csrfToken, email, password, ...(json ? { json: "true" } : {}) }, { jar, headers: { "X-Vestibule-Remote-Addr": `192.0.2.${++clients % 250}` } }),
    { provider: "credentials" },
  );
  return seen(res);
}

function codeIn(message: ReceivedMessage): string {
  return /code in the browser where you asked: (\d{6})/.exec(message.text ?? "")![1]!;
}

async function askForEmail(email: string) {
  const jar = new CookieJar();
  const before = smtp.sink.messages.length;
  await requestLink(jar, { email, callbackUrl: "/account" });
  const message = (await smtp.sink.waitFor(before + 1)).at(-1)!;
  return { jar, link: linkIn(message), code: codeIn(message) };
}

async function typeCode(jar: CookieJar, code: string) {
  const res = await callRoute(callbackEmail.action, post("/auth/callback/email", { csrfToken: await csrfFor(jar), code }, { jar }));
  jar.apply(res);
  return res;
}

async function passkeyOptions(jar: CookieJar, action?: string) {
  const res = await callRoute(optionsRoute.loader, get(`/auth/webauthn-options/passkey${action ? `?action=${action}` : ""}`, { jar }), { provider: "passkey" });
  jar.apply(res);
  return ((await res.json()) as { options: any }).options;
}

async function passkeyAnswer(jar: CookieJar, action: string, data: unknown) {
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/passkey", { csrfToken, action, data: JSON.stringify(data), callbackUrl: "/account" }, { jar }),
    { provider: "passkey" },
  );
  jar.apply(res);
  return res;
}

describe(`a disabled user cannot sign in (${dbLabel})`, () => {
  it("password: the right password gets the wrong password's answer, form post and JSON client alike", async () => {
    await createUser("ada@example.com", "Ada");
    await disableUser("ada@example.com", CLI);
    for (const json of [false, true]) {
      const wrong = await passwordSignIn("ada@example.com", "not-the-password", { json });
      const right = await passwordSignIn("ada@example.com", PASSWORD, { json });
      expect(right).toEqual(wrong);
      expect(right.session).toBe(false);
      expect(right.location ?? right.body).toContain("error=CredentialsSignin");
    }
    // Counted as failures, as a wrong password is: the limits cannot tell them apart either.
    const failed = await testDb().authEvent.count({ where: { type: "signin-failed" } });
    expect(failed).toBe(4);
  });

  it("e-mail link and e-mail code: a used-up link's answer, no session", async () => {
    await createUser("ada@example.com", "Ada");
    const used = await askForEmail("ada@example.com");
    expect((await seen(await openLink(used.link))).session).toBe(true);
    const usedAgain = await seen(await openLink(used.link));

    await disableUser("ada@example.com", CLI);
    const byLink = await askForEmail("ada@example.com");
    expect(await seen(await openLink(byLink.link))).toEqual(usedAgain);
    expect(usedAgain.location).toContain("error=Verification");

    const byCode = await askForEmail("ada@example.com");
    const typed = await seen(await typeCode(byCode.jar, byCode.code));
    expect(typed.session).toBe(false);
    expect(typed.location).toContain("error=Verification");
  });

  it("OAuth: the provider's failed-callback answer, no session", async () => {
    const first = await signInThroughIdp(new CookieJar(), ALICE);
    expect((await seen(first.res)).session).toBe(true);
    await disableUser(ALICE.email, CLI);
    const again = await seen((await signInThroughIdp(new CookieJar(), ALICE)).res);
    expect(again.session).toBe(false);
    expect(again.location).toContain("error=OAuthCallback");
  });

  it("passkey: the answer of a passkey that did not verify, no session", async () => {
    await createUser("ada@example.com", "Ada");
    const { jar } = await signIn();
    const authenticator = new SoftwareAuthenticator();
    expect((await passkeyAnswer(jar, "register", authenticator.register(await passkeyOptions(jar, "register")))).status).toBe(302);
    const unknown = new SoftwareAuthenticator();
    unknown.register(await passkeyOptions(jar, "register"));
    const refused = await seen(await passkeyAnswer(new CookieJar(), "authenticate", unknown.authenticate(await passkeyOptions(new CookieJar()))));

    await disableUser("ada@example.com", CLI);
    const browser = new CookieJar();
    const answer = await seen(await passkeyAnswer(browser, "authenticate", authenticator.authenticate(await passkeyOptions(browser))));
    expect(answer.session).toBe(false);
    expect(answer.location).toContain("error=WebAuthnVerificationError");
    expect(answer.location).toBe(refused.location);
  });

  it("second factor: disabled after the password, the right code gets the wrong code's answer; before it, the password is refused", async () => {
    useStepClock();
    await createUser("ada@example.com", "Ada");
    const { secret } = await enrolled();
    const jar = new CookieJar();
    expect((await firstFactor(jar)).headers.get("Location")).toContain("/auth/two-factor");
    const wrongJar = new CookieJar();
    await firstFactor(wrongJar);
    const wrong = await submitCode(wrongJar, codeAt(secret, 5));
    await disableUser("ada@example.com", CLI);
    advance(30);
    const right = await submitCode(jar, codeAt(secret));
    expect(right.status).toBe(wrong.status);
    expect(right.headers.get("Location")).toBe(wrong.headers.get("Location"));
    expect(isRefusal(right)).toBe(true);
    expect(right.headers.getSetCookie().some((c) => c.startsWith("authjs.session-token="))).toBe(false);
    // A fresh password sign-in no longer reaches the second-factor page.
    const fresh = await firstFactor(new CookieJar());
    expect(fresh.headers.get("Location")).toContain("error=CredentialsSignin");
  });
});

describe(`disabling ends every session (${dbLabel})`, () => {
  for (const strategy of ["jwt", "database"] as const) {
    it(`${strategy}: the sessions end at once, and enabling restores sign-in, not the sessions`, async () => {
      const restore = withEnv({ AUTH_SESSION_STRATEGY: strategy });
      try {
        await createUser("ada@example.com", "Ada");
        const { jar: laptop } = await signIn(new CookieJar());
        const { jar: phone } = await signIn(new CookieJar());
        expect((await sessionOf(laptop))?.user.email).toBe("ada@example.com");
        const result = await disableUser("ada@example.com", CLI);
        expect(result).toMatchObject({ ok: true, changed: true, sessionsEnded: 2 });
        expect(await sessionOf(laptop)).toBeNull();
        expect(await sessionOf(phone)).toBeNull();
        // A fresh process (another instance) refuses them too, from what the database says.
        resetRevocations();
        resetSessionCache();
        expect(await sessionOf(phone)).toBeNull();
        const user = await testDb().user.findUniqueOrThrow({ where: { email: "ada@example.com" } });
        if (strategy === "database") {
          expect(await testDb().session.count({ where: { userId: user.id } })).toBe(0);
          expect(await testDb().sessionRevocation.count()).toBe(2);
        } else {
          expect(await testDb().sessionCutoff.count({ where: { userId: user.id } })).toBe(1);
        }
        const event = await testDb().authEvent.findFirstOrThrow({ where: { type: "user-disabled" } });
        expect(JSON.parse(event.detail!)).toEqual({ count: 2, source: "cli" });

        await enableUser("ada@example.com", CLI);
        expect(await sessionOf(laptop)).toBeNull();
        const { jar: again } = await signIn(new CookieJar());
        expect((await sessionOf(again))?.user.email).toBe("ada@example.com");
      } finally {
        restore();
      }
    });
  }

  it("jwt: a cookie that escaped the revocation list is not rolled or refreshed for a disabled user", async () => {
    await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar());
    // Disabled in the database only, as a sign-in racing the disable would leave it.
    await testDb().user.update({ where: { email: "ada@example.com" }, data: { disabledAt: new Date() } });
    vi.useFakeTimers({ toFake: ["Date"], now: new Date(Date.now() + (getConfig().sessionUpdateAge + 60) * 1000) });
    expect(await sessionOf(jar)).toBeNull();
  });

  it("database: a session row of a disabled user reads as no session", async () => {
    const restore = withEnv({ AUTH_SESSION_STRATEGY: "database" });
    try {
      await createUser("ada@example.com", "Ada");
      const { jar } = await signIn(new CookieJar());
      expect(await sessionOf(jar)).not.toBeNull();
      await testDb().user.update({ where: { email: "ada@example.com" }, data: { disabledAt: new Date() } });
      resetSessionCache();
      expect(await sessionOf(jar)).toBeNull();
    } finally {
      restore();
    }
  });

  it("ending a user's sessions (user:sessions:end) leaves sign-in open", async () => {
    await createUser("ada@example.com", "Ada");
    const { jar } = await signIn(new CookieJar());
    expect(await endUserSessions("ada@example.com", CLI)).toMatchObject({ ok: true, sessionsEnded: 1 });
    expect(await sessionOf(jar)).toBeNull();
    expect((await passwordSignIn("ada@example.com", PASSWORD)).session).toBe(true);
  });

  it.runIf(dbLabel === "postgres")("announces user-disabled to every instance on the revocation channel", async () => {
    const user = await createUser("ada@example.com", "Ada");
    const listener = new pg.Client({ connectionString: getConfig().databaseUrl! });
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on("notification", (m) => heard.push(m.payload ?? ""));
      await listener.query(`LISTEN "${REVOCATION_CHANNEL}"`);
      await disableUser("ada@example.com", CLI);
      await vi.waitFor(() => expect(heard.map((p) => JSON.parse(p).kind)).toContain("user-disabled"), { timeout: 5_000 });
      expect(heard.map((p) => JSON.parse(p))).toContainEqual({ v: 1, kind: "user-disabled", userId: user.id });
    } finally {
      await listener.end();
    }
  });
});
