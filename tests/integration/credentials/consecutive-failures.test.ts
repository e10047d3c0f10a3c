// The consecutive-failure ceiling (NIST SP 800-63B-4 §3.2.2,
// docs/decisions/083): after 100 failed password attempts against one account with no success
// between, a browser without that account's device cookie must also give the code e-mailed to
// the account's address. The owner's own browsers are unaffected, nothing is ever locked, a
// success resets the count, and an unknown address past the ceiling looks the same.
// The 100 failures are seeded on the counter (99) plus one real attempt over the line: hashing a
// hundred passwords would cost seconds and prove nothing more.
import { describe, expect, it } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { hashPassword, verifyPassword } from "../../../app/auth/credentials/password.server.ts";
import { consecutiveFailureCeilingReached, countConsecutiveFailure } from "../../../app/auth/core/limits.server.ts";
import * as callbackEmail from "../../../app/routes/auth/callback-email.tsx";
import * as account from "../../../app/routes/account.tsx";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { dbLabel } from "../../support/db.ts";
import { callRoute, CookieJar, get, post, setCookieHeaders } from "../../support/http.ts";
import { ageSession, reauthenticate, reauthRefusalPage } from "../../support/reauth.ts";
import { requireRecentAuth } from "../../../app/auth/index.ts";
import { csrfFor, sessionOf, useSmtpSink } from "../email/helpers.ts";
import { codeIn } from "../passwords/helpers.ts";
import { isSecurityNotice } from "../../support/smtp-sink.ts";

const smtp = useSmtpSink();
const VERIFY = "http://localhost:3000/auth/verify-request?provider=email&type=email";

/** 99 failures on the counter, then one real wrong password over the line: 100 in a row. */
async function hundredFailures(email: string) {
  await countConsecutiveFailure(getConfig().rateLimits, email, 99);
  const { res } = await signIn(new CookieJar(), email, "not the password at all");
  expect(res.headers.get("Location")).toContain("error=CredentialsSignin");
  expect(await consecutiveFailureCeilingReached(getConfig().rateLimits, email)).toBe(true);
}

async function typeCode(jar: CookieJar, code: string) {
  const csrfToken = await csrfFor(jar);
  const [jsonMode] = callbackEmail.middleware;
  const res = await callRoute(
    (args: { request: Request }) => jsonMode(args as never, () => callRoute(callbackEmail.action, args.request)),
    post("/auth/callback/email", { csrfToken, code }, { jar }),
  );
  jar.apply(res);
  return res;
}

const cookieNames = (res: Response) => setCookieHeaders(res).map((c) => c.slice(0, c.indexOf("="))).sort();

describe(`the consecutive-failure ceiling (${dbLabel})`, () => {
  it("after 100 failures, a new browser with the right password must also enter the code e-mailed to the address; then the count starts again", async () => {
    await createUser();
    await hundredFailures("ada@example.com");
    const { jar, res } = await signIn();
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe(VERIFY);
    expect(res).not.toHaveSessionCookie();
    expect(await sessionOf(jar)).toBeNull();
    const [message] = await smtp.sink.waitFor(1);
    expect(message!.envelope.to).toEqual(["ada@example.com"]);

    const signedIn = await typeCode(jar, codeIn(message!));
    expect(signedIn).toHaveSessionCookie();
    expect((await sessionOf(jar))?.user.email).toBe("ada@example.com");
    // The sign-in was a success: the count is back to zero, another browser needs no code.
    expect(await consecutiveFailureCeilingReached(getConfig().rateLimits, "ada@example.com")).toBe(false);
    expect((await signIn()).res).toHaveSessionCookie();
  });

  it("the owner's own browser (its device cookie) signs in with the password alone, past the ceiling", async () => {
    await createUser();
    const { jar } = await signIn();
    await hundredFailures("ada@example.com");
    const again = await signIn(jar);
    expect(again.res).toHaveSessionCookie();
    expect(again.res.headers.get("Location")).not.toBe(VERIFY);
    // No code was sent (the first sign-in's new-browser notice may be on its way; ADR 081).
    expect(smtp.sink.messages.filter((m) => !isSecurityNotice(m))).toHaveLength(0);
  });

  it("past the ceiling a wrong password gets the same answer as a right one, and no e-mail", async () => {
    await createUser();
    await hundredFailures("ada@example.com");
    const wrong = (await signIn(new CookieJar(), "ada@example.com", "still not the password")).res;
    const right = (await signIn(new CookieJar(), "ada@example.com", PASSWORD)).res;
    expect(wrong.status).toBe(right.status);
    expect(wrong.headers.get("Location")).toBe(right.headers.get("Location"));
    expect(cookieNames(wrong)).toEqual(cookieNames(right));
    // Only the right password's code was sent.
    await smtp.sink.waitFor(1);
    expect(smtp.sink.messages).toHaveLength(1);
  });

  it("an unknown address past the ceiling looks the same as a known one, and nothing is sent", async () => {
    await createUser();
    await hundredFailures("ada@example.com");
    await hundredFailures("nobody@example.com");
    const known = (await signIn(new CookieJar(), "ada@example.com", "a wrong password here")).res;
    const unknown = (await signIn(new CookieJar(), "nobody@example.com", "a wrong password here")).res;
    expect(unknown.status).toBe(known.status);
    expect(unknown.headers.get("Location")).toBe(VERIFY);
    expect(cookieNames(unknown)).toEqual(cookieNames(known));
    expect(smtp.sink.messages).toHaveLength(0);
  });

  it("a JSON client past the ceiling gets the verify-request page as its {url}", async () => {
    await createUser();
    await hundredFailures("ada@example.com");
    const { res } = await signIn(new CookieJar(), "ada@example.com", PASSWORD, { json: "true" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: VERIFY });
    expect(cookieNames(res)).toContain("authjs.email-code");
    await smtp.sink.waitFor(1);
  });

  it("99 failures in a row change nothing: the password alone still signs in, and resets the count", async () => {
    await createUser();
    await countConsecutiveFailure(getConfig().rateLimits, "ada@example.com", 98);
    expect((await signIn(new CookieJar(), "ada@example.com", "wrong once more")).res.headers.get("Location")).toContain("CredentialsSignin");
    expect((await signIn()).res).toHaveSessionCookie();
    await countConsecutiveFailure(getConfig().rateLimits, "ada@example.com", 99);
    expect(await consecutiveFailureCeilingReached(getConfig().rateLimits, "ada@example.com")).toBe(false);
  });
});

describe(`the consecutive-failure ceiling on the re-authentication page (${dbLabel})`, () => {
  it("a thief holding only a copy of the session cookie guesses past the ceiling on /auth/reauth: the right password alone does not make the copy recent; the owner's browser still confirms with it", async () => {
    await createUser();
    const { jar: owner } = await signIn();
    await ageSession(owner, 11);
    const thief = new CookieJar();
    for (const name of owner.names()) if (name.includes("session-token")) thief.set(name, owner.get(name)!);
    await hundredFailures("ada@example.com");

    const right = await reauthenticate(thief, { password: PASSWORD });
    const wrong = await reauthenticate(thief, { password: "still not the password" });
    // The same answer for a right and a wrong guess: past the ceiling, the password tells nothing.
    expect(right.headers.get("Location")).toBe(wrong.headers.get("Location"));
    const [rightPage, wrongPage] = [await reauthRefusalPage(thief, right), await reauthRefusalPage(thief, wrong)];
    expect(rightPage.error).toBe(wrongPage.error);
    expect(rightPage.error).toMatch(/code/);
    expect(await isRecent(thief)).toBe(false);

    // The owner's own browser (its device cookie) is unaffected.
    expect(await reauthenticate(owner, { password: PASSWORD })).toHaveRedirect("/account");
    expect(await isRecent(owner)).toBe(true);
  });
});

async function isRecent(jar: CookieJar): Promise<boolean> {
  return requireRecentAuth(get("/app/transfer", { jar })).then(
    () => true,
    () => false,
  );
}

describe(`the consecutive-failure ceiling counts the current password on /account (${dbLabel})`, () => {
  it("a thief holding a recent copy of the session cookie guessing the current password on /account counts towards the ceiling like any wrong password", async () => {
    await createUser();
    const { jar } = await signIn();
    await countConsecutiveFailure(getConfig().rateLimits, "ada@example.com", 99);
    const csrfToken = await csrfFor(jar);
    const request = post("/account", { csrfToken, intent: "password-change", currentPassword: "a wrong guess at it", password: "an entirely new long passphrase" }, { jar });
    const res = (await account.middleware[0]!({ request } as never, () => callRoute(account.action, request))) as Response;
    // Refused: the browser is sent back to the page, which names it.
    expect(res.headers.get("Location")).toBe("/account?refused=currentWrong&intent=password-change#password-notice");
    expect(await consecutiveFailureCeilingReached(getConfig().rateLimits, "ada@example.com")).toBe(true);
  });
});

describe(`an unknown address costs a password verification too (${dbLabel})`, () => {
  it("an attacker timing the sign-in form cannot tell an unknown address from a known one: both wait for one Argon2 verification", async () => {
    await createUser();
    const stored = await hashPassword(PASSWORD);
    // Processor time of this process (Argon2 runs on its thread pool), not the wall clock: other
    // processes on a busy machine cannot shrink it, only other work here can add to it.
    const cpu = async (work: () => Promise<unknown>) => {
      const before = process.cpuUsage();
      await work();
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000;
    };
    const verifications: number[] = [];
    const known: number[] = [];
    const unknown: number[] = [];
    const attempt = (email: string) =>
      cpu(async () => {
        const { res } = await signIn(new CookieJar(), email, "not the password at all");
        expect(res.headers.get("Location")).toContain("error=CredentialsSignin");
      });
    for (let i = 0; i < 4; i++) {
      verifications.push(await cpu(() => verifyPassword(stored, "not the password at all")));
      known.push(await attempt("ada@example.com"));
      unknown.push(await attempt("nobody@example.com"));
    }
    // The least of each (other work only ever adds). An unknown address's answer holds a whole
    // verification: without it, it cost a few milliseconds (the lookup and the answer). It is not
    // compared with the known address's answer, whose database writes (the failure counted, the
    // audit row) cost this process's driver more processor time on PostgreSQL than on SQLite and
    // made that comparison depend on the database, not on the verification.
    const verification = Math.min(...verifications);
    expect(Math.min(...unknown)).toBeGreaterThan(0.8 * verification);
    expect(Math.min(...known)).toBeGreaterThan(0.8 * verification);
  });
});
