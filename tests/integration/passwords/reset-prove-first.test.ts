// Issue 31, finding 1 (ADR 103): the forms that take a secret and a new password prove the secret
// first and judge the password after. Before the e-mailed code (or the link) is proved, a visitor
// who asked a reset for an address learns nothing of the account — whether it exists, has its
// second factor on (8- against 15-character floor), or which words its owner's name has; a
// password refused after the proof costs one of the code's five tries; once proved, the form
// shows the account's own floor, the one /account shows.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { verifyPassword } from "../../../app/auth/credentials/password.server.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import { createUser, PASSWORD, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar, fetchCsrf } from "../../support/http.ts";
import { linkIn } from "../../support/smtp-sink.ts";
import { accountIntent, accountPage, enrolled, useStepClock } from "../two-factor/helpers.ts";
import { configure, ORIGIN, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { askReset, codeIn, median, openResetPage, postReset, resetRefusalOf } from "./helpers.ts";
import { accountRefusal } from "../../support/account-refusal.ts";

const smtp = useSmtpSink();
afterEach(() => vi.useRealTimers());

/** 11 characters: under the 15-character floor, over the 8 of a second factor; holds "lovelace". */
const NAMED = "lovelace#42";
const NEW = "velvet lantern orbit";

type FormBody = { formError: string | null; fieldErrors: Record<string, string>; values: { minLength: number } };

/** A reset asked for `email` in a new browser; the message (code and link) when the address has an account. */
async function asked(email: string, { mailed = true } = {}) {
  await mailSenderIdle();
  const jar = new CookieJar();
  const before = smtp.sink.messages.length;
  expect((await askReset(jar, email)).status).toBe(302);
  if (!mailed) return { jar, code: null, link: null };
  const message = (await smtp.sink.waitFor(before + 1)).at(-1)!;
  return { jar, code: codeIn(message), link: linkIn(message) };
}

/** A wrong code: never the one mailed (or any six digits for an address that got none). */
const wrongCode = (code: string | null) => (code === "000000" ? "000001" : "000000");

/** The answer as a JSON client sees it, without the per-browser CSRF token. */
async function shown(res: Response) {
  const body = (await res.json()) as FormBody & { csrfToken?: string };
  delete body.csrfToken;
  return { status: res.status, body };
}

describe.each(["jwt", "database"] as const)(`the reset form proves the code before it judges the password, %s sessions (${dbLabel})`, (strategy) => {
  beforeEach(() => {
    useStepClock();
    configure(smtpEnv(smtp.sink.url, { AUTH_SESSION_STRATEGY: strategy }));
  });

  it("a visitor who asked a reset learns nothing without the code: a second-factor account, a named one and an unknown address answer alike", async () => {
    await createUser("ada@example.com", "Ada Lovelace");
    await enrolled("ada@example.com");
    await createUser("grace@example.com", "Grace Lovelace");
    const answers = [];
    for (const [email, mailed] of [["ada@example.com", true], ["grace@example.com", true], ["nobody@example.com", false]] as const) {
      const { jar, code } = await asked(email, { mailed });
      answers.push(await shown(await postReset(jar, { code: wrongCode(code), password: NAMED, json: "true" })));
    }
    expect(answers[0]).toEqual({
      status: 400,
      body: { formError: null, fieldErrors: { code: expect.stringMatching(/4 tries are left/) }, values: { token: null, email: null, minLength: 15, byCode: true } },
    });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    // Nothing about the password was said, nor anything written.
    expect(await testDb().authEvent.count({ where: { type: "password-reset" } })).toBe(0);
  });

  it("a visitor cannot time the difference either: a wrong code for an account and for an unknown address take the same time", async () => {
    await createUser("ada@example.com", "Ada Lovelace");
    const runs = 9;
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < runs; i++) {
      for (const kind of ["known", "unknown"] as const) {
        const { jar, code } = await asked(kind === "known" ? "ada@example.com" : `nobody-${i}@example.com`, { mailed: kind === "known" });
        await fetchCsrf(jar);
        const started = performance.now();
        const res = await postReset(jar, { code: wrongCode(code), password: NAMED });
        times[kind].push(performance.now() - started);
        expect(res).toHaveRedirect(`${ORIGIN}/auth/verify-request?provider=email&type=reset&refused=wrong&tries=4`);
      }
      await testDb().limitCounter.deleteMany();
    }
    const k = median(times.known);
    const u = median(times.unknown);
    console.log(`reset-by-code wrong code (${dbLabel}, ${runs} runs each): known median ${k.toFixed(1)} ms, unknown ${u.toFixed(1)} ms`);
    expect(Math.abs(k - u)).toBeLessThan(Math.max(15, 0.5 * Math.max(k, u)));
  });

  it("a refused password after the right code counts against the code's five tries; the fifth ends the request", async () => {
    await createUser("ada@example.com", "Ada Lovelace");
    const { jar, code } = await asked("ada@example.com");
    for (let i = 1; i <= 4; i++) {
      const refused = await postReset(jar, { code: code!, password: NAMED, json: "true" });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as FormBody).fieldErrors.password).toMatch(/at least 15/);
      expect((await testDb().verificationToken.findFirstOrThrow({ where: { purpose: "reset" } })).codeAttempts).toBe(i);
    }
    // The fifth refusal ends the request, link and code: the right password comes too late.
    expect(await postReset(jar, { code: code!, password: NAMED })).toHaveErrorRedirect("Verification");
    expect(await testDb().verificationToken.count({ where: { purpose: "reset" } })).toBe(0);
    expect(await postReset(jar, { code: code!, password: NEW })).toHaveErrorRedirect("Verification");
    expect(await verifyPassword((await testDb().password.findFirstOrThrow()).hash, PASSWORD)).toBe(true);
  });

  it("once the code is proved the form shows the account's own rule: with the second factor on, 8 characters as on /account; then the password is set", async () => {
    await createUser("ada@example.com", "Ada Lovelace");
    const { jar: owner } = await enrolled("ada@example.com");
    expect(((await accountPage(owner)) as unknown as { passwordMinLength: number }).passwordMinLength).toBe(8);
    const { jar, code } = await asked("ada@example.com");
    const named = await postReset(jar, { code: code!, password: NAMED, json: "true" });
    expect(named.status).toBe(400);
    const body = (await named.json()) as FormBody;
    expect(body.fieldErrors.password).toMatch(/name/);
    expect(body.values.minLength).toBe(8);
    const short = (await (await postReset(jar, { code: code!, password: "short", json: "true" })).json()) as FormBody;
    expect(short.fieldErrors.password).toMatch(/at least 8/);
    expect(short.values.minLength).toBe(8);
    // A browser's form post: back to the code form, which says the same, with the same floor.
    const page = await resetRefusalOf(jar, await postReset(jar, { code: code!, password: "short" }));
    expect(page).toMatchObject({ code: null, password: expect.stringMatching(/at least 8/), minLength: 8 });
    // Eight characters are enough for this account: on to its second factor (ADR 062).
    expect(await postReset(jar, { code: code!, password: "quiet#harbor" })).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
  });

  it("the link's page (the link proves it) shows the account's own floor: 8 with the second factor on, 15 without, and a refused password keeps it", async () => {
    await createUser("ada@example.com", "Ada Lovelace");
    await enrolled("ada@example.com");
    await createUser("grace@example.com", "Grace Hopper");
    for (const [email, floor] of [["ada@example.com", 8], ["grace@example.com", 15]] as const) {
      const { link } = await asked(email);
      const page = await openResetPage(link!);
      expect(page.status).toBe(200);
      expect(((await page.json()) as FormBody).values.minLength).toBe(floor);
      const refused = await postReset(new CookieJar(), { token: link!.searchParams.get("token")!, email, password: "short", json: "true" });
      expect(refused.status).toBe(400);
      const body = (await refused.json()) as FormBody;
      expect(body.values.minLength).toBe(floor);
      expect(body.fieldErrors.password).toMatch(new RegExp(`at least ${floor}`));
    }
  });

  it("a thief holding the session but not the password learns nothing of the new password's rules from a password change: the current password is checked first", async () => {
    await createUser("ada@example.com", "Ada Lovelace");
    const { jar } = await signIn();
    const res = await accountIntent(jar, { intent: "password-change", currentPassword: "not the password", password: NAMED });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).not.toMatch(/reason|min/);
    const body = await accountRefusal(res, jar);
    expect(JSON.stringify(body)).not.toMatch(/name|at least/i);
    expect(JSON.stringify(body)).toMatch(/current password/i);
    // The owner, with the current password: the rules of the account.
    const owner = await accountIntent(jar, { intent: "password-change", currentPassword: PASSWORD, password: NAMED });
    expect(owner.status).toBe(303);
    expect(JSON.stringify(await accountRefusal(owner, jar))).toMatch(/at least 15/);
  });
});
