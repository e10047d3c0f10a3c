// Every first factor but a passkey is gated (ADR 043): an e-mail link and an OpenID
// Connect sign-in (the real test IdP over HTTP) for a user with TOTP on end on the second-factor
// page without a session, and the code finishes them with the method and factors recorded.
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { decodeJwt } from "../../../app/auth/core/jwt.server.ts";
import { createUser } from "../../support/auth.ts";
import { dbLabel, resetDatabase, testDb } from "../../support/db.ts";
import { CookieJar, ORIGIN } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { sessionOf as oauthSessionOf, signInThroughIdp } from "../../support/oauth-flow.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { openLink, requestLink, sessionOf, useSmtpSink } from "../email/helpers.ts";
import { accountIntent, codeAt, enrolled, PENDING, SESSION, submitCode, useStepClock } from "./helpers.ts";

const smtp = useSmtpSink();

describe(`an e-mail link is gated (${dbLabel})`, () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the link ends on the second-factor page without a session; the code signs in (factors email otp mfa)", async () => {
    useStepClock();
    await createUser();
    const { secret, userId } = await enrolled();
    // The "second factor turned on" security e-mail goes out first; this test reads the link's.
    await mailSenderIdle();
    smtp.sink.clear();
    const asker = new CookieJar();
    await requestLink(asker, { email: "ada@example.com", callbackUrl: "/account" });
    const [message] = await smtp.sink.waitFor(1);
    const browser = new CookieJar();
    const res = await openLink(linkIn(message!), browser);
    expect(res).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(res).not.toHaveSessionCookie();
    expect(browser.get(PENDING)).toBeTruthy();
    expect(await sessionOf(browser)).toBeNull();
    // The link is used up by the first factor: opening it again does not start a second one.
    expect(await openLink(linkIn(message!), new CookieJar())).toHaveErrorRedirect("Verification");

    const done = await submitCode(browser, codeAt(secret));
    expect(done).toHaveRedirect(`${ORIGIN}/account`);
    expect((await sessionOf(browser))?.user.email).toBe("ada@example.com");
    const claims = await decodeJwt({ token: decodeURIComponent(browser.get(SESSION)!), secrets: getConfig().secrets, salt: SESSION });
    expect(claims.amr).toEqual(["email", "otp", "mfa"]);
    const row = await testDb().session.findFirstOrThrow({ where: { userId, method: "email" } });
    expect(row.factors).toBe("email otp mfa");
  });
});

describe(`an OpenID Connect sign-in is gated (${dbLabel})`, () => {
  let idp: TestIdp;
  beforeAll(async () => {
    idp = await startTestIdp();
  });
  afterAll(() => idp?.stop());

  it("the IdP's answer ends on the second-factor page without a session; the code signs in (factors fed otp mfa)", async () => {
    await resetDatabase();
    idp.configure();
    // Alice's first sign-in creates her account; from it she turns TOTP on.
    const first = new CookieJar();
    const created = await signInThroughIdp(first, ALICE, { callbackUrl: "/account" });
    expect(created.res).toHaveSessionCookie();
    const started = await accountIntent(first, { intent: "totp-start" });
    const { totpSetup } = (await started.json()) as { totpSetup: { secret: string } };
    expect((await accountIntent(first, { intent: "totp-confirm", code: codeAt(totpSetup.secret) })).status).toBe(200);

    const laptop = new CookieJar();
    const { res } = await signInThroughIdp(laptop, ALICE, { callbackUrl: "/account" });
    expect(res).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(res).not.toHaveSessionCookie();
    expect(await oauthSessionOf(laptop)).toBeNull();
    // The next step's code: the enrolment used the current one.
    const done = await submitCode(laptop, codeAt(totpSetup.secret, 1));
    expect(done).toHaveRedirect(`${ORIGIN}/account`);
    expect((await oauthSessionOf(laptop))?.user.email).toBe(ALICE.email);
    const claims = await decodeJwt({ token: decodeURIComponent(laptop.get(SESSION)!), secrets: getConfig().secrets, salt: SESSION });
    expect(claims.amr).toEqual(["fed", "otp", "mfa"]);
  });
});
