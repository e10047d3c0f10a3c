// ADR 059 and ADR 081: what each security e-mail says — the device (summed up,
// never the client's own words), the place only when a local lookup is registered, the time in the
// request's language in UTC with the zone named — that none carries a link or code that signs in,
// that AUTH_SECURITY_EMAILS=false sends none, and that a sign-in from a browser without the
// account's device cookie is told while one from the owner's own browser is not.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { notifySecurityChange, registerPlaceLookup, type SecurityChange } from "../../../app/auth/accounts/security-notices.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { runWithLocale } from "../../../app/i18n/t.server.ts";
import { mailSenderIdle } from "../../../app/mail/queue.server.ts";
import { createUser, signIn } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { CookieJar, get, ORIGIN } from "../../support/http.ts";
import { configure, smtpEnv, useSmtpSink } from "../email/helpers.ts";
import { enrol, firstFactor, submitCode, useStepClock } from "../two-factor/helpers.ts";

const smtp = useSmtpSink(null);
afterEach(async () => {
  registerPlaceLookup(null);
  await mailSenderIdle();
});

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

/** Every change the account's owner is told of (and ADR 059's own). */
const EVERY_CHANGE: SecurityChange[] = [
  { kind: "signin-new-device" },
  { kind: "password-set" },
  { kind: "password-changed" },
  { kind: "password-reset" },
  { kind: "password-removed" },
  { kind: "email-changed", from: "owner@example.com", to: "new@example.com" },
  { kind: "second-factor-on" },
  { kind: "second-factor-off" },
  { kind: "recovery-code-used", left: 3 },
  { kind: "recovery-codes-replaced" },
  { kind: "passkey-added", name: "Laptop" },
  { kind: "passkey-removed", name: null },
  { kind: "account-linked", provider: "GitHub" },
  { kind: "account-unlinked", provider: "GitHub" },
  { kind: "sessions-ended", scope: "all" },
  { kind: "account-deleted" },
];

async function owner() {
  return testDb().user.create({ data: { email: "owner@example.com", emailVerified: new Date() } });
}

function notify(userId: string, change: SecurityChange, { locale = "en" as "en" | "de", userAgent = FIREFOX } = {}) {
  const ar = authRequest(get("/account", { headers: { "User-Agent": userAgent } }));
  return runWithLocale(locale, () => notifySecurityChange(ar, userId, change));
}

describe(`security e-mails (${dbLabel})`, () => {
  beforeEach(() => configure(smtpEnv(smtp.sink.url)));

  it("a German owner's notice (of a change made from an English browser) names the device and gives the time in German, in UTC, with no place line when no place lookup is configured", async () => {
    const user = await owner();
    await testDb().user.update({ where: { id: user.id }, data: { locale: "de" } });
    await notify(user.id, { kind: "password-changed" }, { locale: "en" });
    const [message] = await smtp.sink.waitFor(1);
    expect(message!.subject).toBe("Ihr Vestibule-Passwort wurde geändert");
    // "26. Nov. 2026, 04:10 UTC"
    const when = /Wann: (\d{1,2}\. \S+ \d{4}, \d\d:\d\d UTC)/.exec(message!.text!)?.[1];
    expect(when).toBeDefined();
    expect(message!.text).toContain("Gerät: Firefox unter Linux");
    expect(message!.text).toContain("Das war ich nicht: http");
    expect(message!.text).not.toMatch(/Ort/);
    expect(message!.html).toContain('<html lang="de"');
    expect(message!.html).toContain(when!);
    expect(message!.html).toContain("Gerät: Firefox unter Linux");
  });

  it("with a place lookup registered, the notice gives the approximate place of the client address", async () => {
    const user = await owner();
    const asked: string[] = [];
    registerPlaceLookup((address) => {
      asked.push(address);
      return "Lyon, France";
    });
    const ar = authRequest(get("/account", { headers: { "User-Agent": FIREFOX, "X-Vestibule-Remote-Addr": "203.0.113.9" } }));
    await notifySecurityChange(ar, user.id, { kind: "second-factor-off" });
    const [message] = await smtp.sink.waitFor(1);
    expect(asked).toEqual(["203.0.113.9"]);
    expect(message!.text).toContain("Approximate place: Lyon, France");
    expect(message!.html).toContain("Approximate place: Lyon, France");
  });

  it("a thief's User-Agent written as a sentence with a link never reaches the e-mail: the device is 'Unknown device'", async () => {
    const user = await owner();
    await notify(user.id, { kind: "passkey-added", name: null }, { userAgent: 'Visit https://evil.example/fix now <b>"urgent"</b>' });
    const [message] = await smtp.sink.waitFor(1);
    expect(message!.text).toContain("Device: Unknown device");
    for (const part of [message!.text!, message!.html!]) expect(part).not.toMatch(/evil|urgent/);
  });

  it("a thief's device names — a hostile User-Agent, a passkey named like a sentence with a link, a place with an override — reach the owner's e-mail as short plain text, never as a link", async () => {
    const user = await owner();
    registerPlaceLookup(() => "Lyon\u202Emoc.live\u0007 " + "x".repeat(200));
    // A header is bytes: U+202E arrives as its UTF-8 bytes read one by one.
    const hostileAgent = "Evil\u00e2\u0080\u00ae/1.0 (\tVisit https://evil.example/fix) <a href=https://evil.example>x</a>";
    await notify(user.id, { kind: "passkey-removed", name: "Visit https://evil.example/fix or www.evil.example\u202E\u0000 now" }, { userAgent: hostileAgent });
    const [message] = await smtp.sink.waitFor(1);
    for (const part of [message!.text!, message!.html!]) {
      expect(part).not.toMatch(/[\u202e\u0000\u0007]/);
      // Nothing a mail client would turn into a link: no scheme, no www., no dotted host name.
      expect(part).not.toMatch(/https?:\/\/evil|www\.evil|evil\.example|moc\.live/);
      expect(part).not.toMatch(/x{81}/);
    }
    expect(message!.text).toContain("evil[.]example");
    expect(message!.html).not.toContain("<a href=https://evil");
  });

  it("no notice of any kind carries a link or a code that signs in: only the forgotten-password page, the sign-in page and its own 'This wasn't me' link", async () => {
    const user = await owner();
    for (const change of EVERY_CHANGE) await notify(user.id, change);
    const messages = await smtp.sink.waitFor(EVERY_CHANGE.length);
    expect(new Set(messages.map((m) => m.subject)).size).toBe(EVERY_CHANGE.length);
    const kinds = (await testDb().verificationToken.findMany({ select: { purpose: true } })).map((r) => r.purpose).sort();
    expect(kinds).toEqual(EVERY_CHANGE.map((c) => `wasnt-me:${c.kind}`).sort());
    for (const message of messages) {
      // The one image is the theme's logo (docs/features/look.md): fetched, never followed.
      const images = [...(message.html ?? "").matchAll(/<img [^>]*\bsrc="([^"]+)"[^>]*>/g)];
      expect(images.map((m) => new URL(m[1]!).pathname)).toEqual(["/logo.png"]);
      const html = (message.html ?? "").replace(/<img [^>]*>/g, "");
      const links = [...`${message.text}\n${html}`.matchAll(/https?:\/\/[^\s"<]+/g)].map((m) => new URL(m[0].replace(/&amp;/g, "&")));
      for (const link of links) expect(["/auth/forgot-password", "/auth/signin", "/auth/wasnt-me"]).toContain(link.pathname);
      expect(message.text).not.toMatch(/\b\d{6}\b|callback/);
    }
    expect(messages.find((m) => /recovery code was used/.test(m.subject))!.text).toContain("3 recovery codes are left.");
    // The sent rows keep no copy of the text (and of the live link in it).
    await mailSenderIdle();
    expect((await testDb().mailQueue.findMany({ where: { sentAt: { not: null } } })).every((row) => row.payload === "")).toBe(true);
  });

  it("AUTH_SECURITY_EMAILS=false: no notice of any kind is queued, and no link is made", async () => {
    configure({ AUTH_SECURITY_EMAILS: "false" });
    const user = await owner();
    for (const change of EVERY_CHANGE) await notify(user.id, change);
    expect(await testDb().mailQueue.count()).toBe(0);
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("a sign-in finished with a recovery code tells the owner, with how many remain", async () => {
    useStepClock();
    try {
      await createUser("ada@example.com");
      const { recoveryCodes } = await enrol();
      const jar = new CookieJar();
      await firstFactor(jar);
      expect(await submitCode(jar, recoveryCodes[0]!)).toHaveSessionCookie();
      const [row] = await testDb().mailQueue.findMany({ where: { kind: "recovery-code-used" } });
      expect(row!.recipient).toBe("ada@example.com");
      if (row!.payload) expect(row!.payload).toContain("9 recovery codes are left.");
    } finally {
      vi.useRealTimers();
    }
  });

  it("signing in from a browser that never signed in to the account tells the owner; signing in again from that browser does not", async () => {
    await createUser("ada@example.com");
    const jar = new CookieJar();
    const first = await signIn(jar, "ada@example.com");
    expect(first.res.headers.get("Location")).toBe(`${ORIGIN}/`);
    const [message] = await smtp.sink.waitFor(1);
    expect(message!.subject).toBe("New sign-in to your Vestibule account");
    expect(message!.envelope.to).toEqual(["ada@example.com"]);
    const again = await signIn(jar, "ada@example.com");
    expect(again.res.headers.get("Location")).toBe(`${ORIGIN}/`);
    await mailSenderIdle();
    expect(await testDb().mailQueue.count({ where: { kind: "signin-new-device" } })).toBe(1);
    // Another browser is new again: within the same hour it is summed up in the notice due at the
    // hour's end (ADR 109, tests/integration/accounts/new-device-notices.test.ts).
    await signIn(new CookieJar(), "ada@example.com");
    expect(await testDb().mailQueue.count({ where: { kind: "signin-new-device" } })).toBe(2);
    expect(await testDb().mailQueue.count({ where: { kind: "signin-new-device", coalesceKey: { endsWith: ":more" } } })).toBe(1);
  });
});
