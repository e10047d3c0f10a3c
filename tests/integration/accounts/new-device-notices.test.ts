// Issue 31 item 17, ADR 109: a sign-in from a browser without the account's device cookie tells the
// owner, but a burst of them — about 670 to one user under load — must not
// flood the inbox. The first of each clock hour is told at once; every later one in that hour is
// summed up in one more notice sent when the hour ends; the next hour starts again. The decision
// is a unique key in the mail queue's table, so two instances on one database coalesce too.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mailSenderIdle, sendDueMail } from "../../../app/mail/queue.server.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar } from "../../support/http.ts";
import { runSideBySide } from "../../support/instance-process.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { advance, useStepClock } from "../two-factor/helpers.ts";

const smtp = useSmtpSink(null);
const NEW_SIGNIN = "New sign-in to your Vestibule account";
const MORE_SIGNINS = "More new sign-ins to your Vestibule account";

afterEach(async () => {
  await mailSenderIdle();
  vi.useRealTimers();
});

/** `count` sign-ins as `email`, each from a fresh browser (no device cookie), one after another. */
async function signInsFromNewBrowsers(email: string, count: number) {
  for (let i = 0; i < count; i++) {
    const { res } = await signIn(new CookieJar(), email);
    expect(res.status).toBe(302);
  }
}

/** Lets every due message go out, then the subjects the sink holds for `to`. */
async function subjectsTo(to: string): Promise<string[]> {
  await mailSenderIdle();
  await sendDueMail();
  return smtp.sink.messages.filter((m) => m.envelope.to.includes(to)).map((m) => m.subject);
}

describe(`new-device notices are coalesced per account (${dbLabel})`, () => {
  beforeEach(() => configure(smtpEnv(smtp.sink.url)));

  it("fifty sign-ins from new browsers within the hour send one e-mail; the rest are summed up once the hour ends, and the next hour's first sign-in is told again", async () => {
    useStepClock(); // 12:00:05 UTC
    await createUser("ada@example.com");
    await signInsFromNewBrowsers("ada@example.com", 50);
    expect(await subjectsTo("ada@example.com")).toEqual([NEW_SIGNIN]);
    // The later 49 wait in one queued summary, due at the hour's end; no more rows than that.
    expect(await testDb().mailQueue.count({ where: { recipient: "ada@example.com" } })).toBe(2);

    advance(60 * 60); // 13:00:05: the summary is due; a new hour has begun.
    expect(await subjectsTo("ada@example.com")).toEqual([NEW_SIGNIN, MORE_SIGNINS]);
    const summary = smtp.sink.messages.find((m) => m.subject === MORE_SIGNINS)!;
    expect(summary.text).toContain("within the same hour");
    expect(summary.text).toContain("This wasn't me");

    await signInsFromNewBrowsers("ada@example.com", 1);
    expect(await subjectsTo("ada@example.com")).toEqual([NEW_SIGNIN, MORE_SIGNINS, NEW_SIGNIN]);
  });

  it("one account's burst does not hold back another account's notice", async () => {
    useStepClock();
    await createUser("ada@example.com");
    await createUser("grace@example.com", "Grace");
    await signInsFromNewBrowsers("ada@example.com", 5);
    await signInsFromNewBrowsers("grace@example.com", 1);
    expect(await subjectsTo("ada@example.com")).toEqual([NEW_SIGNIN]);
    expect(await subjectsTo("grace@example.com")).toEqual([NEW_SIGNIN]);
  });

  it("sign-ins racing at once are told once and summed up once", async () => {
    await createUser("ada@example.com");
    const results = await Promise.all(Array.from({ length: 12 }, () => signIn(new CookieJar(), "ada@example.com")));
    expect(results.map((r) => r.res.status)).toEqual(Array(12).fill(302));
    await mailSenderIdle();
    const rows = await testDb().mailQueue.findMany({ where: { recipient: "ada@example.com" }, select: { coalesceKey: true } });
    expect(rows).toHaveLength(2);
    expect(await subjectsTo("ada@example.com")).toEqual([NEW_SIGNIN]);
  });

  it("two instances on one database, signing the account in from new browsers at the same moment, still send one e-mail now", async () => {
    await createUser("ada@example.com");
    // Two processes (tests/support/instance-process.ts), told to go together once both have loaded.
    const [a, b] = await runSideBySide<number[]>("tests/support/signin-instance.ts", { EMAIL: "ada@example.com", CALLS: "6" }, "statuses");
    expect([...a, ...b]).toEqual(Array(12).fill(302));
    expect(await testDb().mailQueue.count({ where: { recipient: "ada@example.com" } })).toBe(2);
    // Whichever instance queued it, the one notice due now goes out once.
    await sendDueMail();
    expect(await subjectsTo("ada@example.com")).toEqual([NEW_SIGNIN]);
  });
});
