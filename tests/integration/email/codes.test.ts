// E-mailed codes beside the link, end to end: the real routes, the SMTP sink,
// the database. A code works only in the browser that asked (its sealed authjs.email-code cookie),
// link and code end together, the fifth wrong code ends both.
import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import * as callbackEmail from "../../../app/routes/auth/callback-email.tsx";
import * as verifyRequest from "../../../app/routes/auth/verify-request.tsx";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { runWithLocale } from "../../../app/i18n/t.server.ts";
import { listOutbox } from "../../../app/mail/outbox.server.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get, post } from "../../support/http.ts";
import { isSecurityNotice, linkIn, waitForMessages, type ReceivedMessage } from "../../support/smtp-sink.ts";
import { configure, csrfFor, location, openLink, ORIGIN, requestLink, sessionOf, smtpEnv, TEST_AUTH_SECRET, useSmtpSink } from "./helpers.ts";

const smtp = useSmtpSink();

export function codeIn(message: ReceivedMessage): string {
  const m = /code in the browser where you asked: (\d{6})/.exec(message.text ?? "");
  if (!m) throw new Error(`no code in the message:\n${message.text}`);
  return m[1]!;
}

async function asked(jar = new CookieJar(), email = "sam@example.com", extra: Record<string, unknown> = {}) {
  // Counted without the security e-mails a sign-in from a new browser sends (ADR 081).
  const before = smtp.sink.messages.filter((m) => !isSecurityNotice(m)).length;
  const res = await requestLink(jar, { email, callbackUrl: "/account", ...extra });
  const message = (await waitForMessages(smtp.sink, before + 1))[before]!;
  return { jar, res, message, code: codeIn(message), link: linkIn(message) };
}

async function typeCode(jar: CookieJar, code: string, options: { csrf?: string | null; headers?: Record<string, string>; extra?: Record<string, string> } = {}) {
  const csrfToken = options.csrf === undefined ? await csrfFor(jar) : options.csrf;
  const body: Record<string, string> = { code, ...options.extra };
  if (csrfToken !== null) body.csrfToken = csrfToken;
  // Through the route's middleware, as a real request goes: it answers JSON-mode clients itself.
  const [jsonMode] = callbackEmail.middleware;
  const res = await callRoute(
    (args: { request: Request }) => jsonMode(args as never, () => callRoute(callbackEmail.action, args.request)),
    post("/auth/callback/email", body, { jar, headers: options.headers }),
  );
  jar.apply(res);
  return res;
}

async function codeFormOf(jar: CookieJar, type = "email") {
  const res = await callRoute(verifyRequest.loader, get(`/auth/verify-request?provider=email&type=${type}`, { jar }));
  return ((await res.json()) as { codeForm: { action: string; callbackUrl: string | null } | null }).codeForm;
}

/** A refused code's answer (Post/Redirect/Get): a redirect back to the check-your-e-mail page, whose form says why. */
const isRefused = (res: Response) => res.status === 302 && new URL(res.headers.get("Location") ?? "/", ORIGIN).pathname === "/auth/verify-request";

/** The refusal the page shows in this browser, where the refused code's redirect leads. */
async function refusalOf(jar: CookieJar, res: Response): Promise<string> {
  expect(isRefused(res)).toBe(true);
  const location = new URL(res.headers.get("Location")!);
  const page = await callRoute(verifyRequest.loader, get(location.pathname + location.search, { jar }));
  return ((await page.json()) as { codeError: string }).codeError;
}

describe(`e-mailed codes (${dbLabel})`, () => {
  it("every sign-in e-mail carries a 6-digit code; the answer sets a sealed authjs.email-code cookie; the row keeps only an HMAC", async () => {
    const { res, message, code, jar } = await asked();
    expect(res).toHaveRedirect(`${ORIGIN}/auth/verify-request?provider=email&type=email`);
    expect(code).toMatch(/^\d{6}$/);
    expect(message.html).toContain(code);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("authjs.email-code="))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Max-Age=(59\d|600)/);
    // Neither the code nor the address can be read from it.
    const value = jar.get("authjs.email-code")!;
    expect(value.split(".")).toHaveLength(5);
    expect(value).not.toContain(code);
    expect(Buffer.from(value.split(".")[0]!, "base64url").toString()).not.toContain("sam");
    const [row] = await testDb().verificationToken.findMany();
    expect(row!.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.codeHash).toBe(createHmac("sha256", TEST_AUTH_SECRET).update(`email-code\n${row!.requestId}\n${code}`).digest("hex"));
    expect(row!.codeHash).not.toBe(createHash("sha256").update(code).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(`"${code}"`);
    const codeLife = row!.codeExpires!.getTime() - row!.createdAt.getTime();
    expect(Math.abs(codeLife - 600_000)).toBeLessThan(5_000);
  });

  it("the verify-request page shows the code form only in the browser that asked", async () => {
    const { jar } = await asked();
    expect(await codeFormOf(jar)).toMatchObject({ action: "/auth/callback/email", callbackUrl: "/account" });
    expect(await codeFormOf(new CookieJar())).toBeNull();
  });

  it("a right code behaves as the link (a new user lands on /welcome) and then the link is dead", async () => {
    const { jar, code, link } = await asked();
    const res = await typeCode(jar, code);
    expect(res).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect(res).toHaveSessionCookie();
    expect(jar.get("authjs.email-code")).toBeUndefined();
    expect((await sessionOf(jar))?.user.email).toBe("sam@example.com");
    expect(await openLink(link)).toHaveErrorRedirect("Verification");
  });

  it("a used link ends the code too", async () => {
    const { jar, code, link } = await asked();
    expect(await openLink(link)).toHaveSessionCookie();
    const res = await typeCode(jar, code);
    expect(res).toHaveErrorRedirect("Verification");
    expect(res.headers.get("Location")).toBe(`${ORIGIN}/auth/error?error=Verification`);
  });

  it("a wrong code comes back to the code form (a redirect, so Back never lands on a POST) saying how many tries are left; the right code right after a mistake works (the honest typo)", async () => {
    const { jar, code } = await asked();
    const wrong = code === "000000" ? "000001" : "000000";
    const res = await typeCode(jar, wrong);
    expect(await refusalOf(jar, res)).toBe("That code is not right. 4 tries are left.");
    const again = await typeCode(jar, ` ${code.slice(0, 3)} ${code.slice(3)} `);
    expect(again).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
  });

  it("the fifth wrong code ends the request and its link; a sixth guess, even the right code, is Verification", async () => {
    const { jar, code, link } = await asked();
    const wrong = code === "000000" ? "000001" : "000000";
    for (const left of [4, 3, 2, 1]) expect(await refusalOf(jar, await typeCode(jar, wrong))).toMatch(new RegExp(`${left} tr(y is|ies are) left`));
    expect(await typeCode(jar, wrong)).toHaveErrorRedirect("Verification");
    expect(await typeCode(jar, code)).toHaveErrorRedirect("Verification");
    expect(await openLink(link)).toHaveErrorRedirect("Verification");
    expect(await testDb().verificationToken.count()).toBe(0);
    expect(await testDb().user.count()).toBe(0);
  });

  it("a German visitor reads the refusal in German; a JSON client gets the same English text in any language", async () => {
    const { jar, code } = await asked();
    const wrong = code === "000000" ? "000001" : "000000";
    const page = await runWithLocale("de", () => typeCode(jar, wrong));
    expect(await runWithLocale("de", () => refusalOf(jar, page))).toBe("Dieser Code ist nicht richtig. 4 Versuche bleiben übrig.");
    const json = await runWithLocale("de", () => typeCode(jar, wrong, { headers: { "X-Auth-Return-Redirect": "1" } }));
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({ error: "code", message: "That code is not right. 3 tries are left.", triesLeft: 3 });
  });

  it("twenty wrong guesses at once get five comparisons at most, and the request ends", async () => {
    const { jar, code } = await asked();
    const wrong = code === "000000" ? "000001" : "000000";
    const csrf = await csrfFor(jar);
    const answers = await Promise.all(Array.from({ length: 20 }, () => typeCode(jar, wrong, { csrf })));
    // Attempts are reserved before the comparison: the row never counts more than five.
    expect(answers.filter(isRefused).length).toBeLessThanOrEqual(4);
    // The others found the request ended, or the address's budget of wrong codes spent (ten).
    for (const r of answers.filter((r) => !isRefused(r))) expect(new URL(r.headers.get("Location")!).searchParams.get("error")).toMatch(/^(Verification|RateLimited)$/);
    expect(await testDb().verificationToken.count()).toBe(0);
    const last = await typeCode(jar, code, { csrf });
    expect(last).toHaveErrorRedirect("Verification");
    expect(last).not.toHaveSessionCookie();
  });

  it("the same code from another browser is refused, with or without email=, and does not spend the asking browser's tries", async () => {
    const { jar, code } = await asked();
    const other = new CookieJar();
    expect(await typeCode(other, code)).toHaveErrorRedirect("Verification");
    expect(await typeCode(other, code, { extra: { email: "sam@example.com" } })).toHaveErrorRedirect("Verification");
    // A cookie from the attacker's own request does not open the victim's.
    const attacker = await asked(new CookieJar(), "mallory@example.com");
    expect(isRefused(await typeCode(attacker.jar, code === attacker.code ? "999999" : code))).toBe(true);
    expect(await testDb().user.count()).toBe(0);
    expect(await typeCode(jar, code)).toHaveSessionCookie();
  });

  it("the honest user who pressed 'send again' types the code of the first e-mail: it signs her in, and ends the second e-mail's code and link", async () => {
    const first = await asked();
    const second = await asked(first.jar);
    expect(await typeCode(first.jar, first.code)).toHaveSessionCookie();
    expect(await openLink(second.link)).toHaveErrorRedirect("Verification");
    expect(await openLink(first.link)).toHaveErrorRedirect("Verification");
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("the newest e-mail's code works too, and ends the earlier e-mail's link", async () => {
    const first = await asked();
    const second = await asked(first.jar);
    expect(await typeCode(first.jar, second.code)).toHaveSessionCookie();
    expect(await openLink(first.link)).toHaveErrorRedirect("Verification");
  });

  it("the cookie names at most the last three requests of the browser; an older e-mail's code is refused", async () => {
    const jar = new CookieJar();
    const sent = [];
    for (let i = 0; i < 4; i++) sent.push(await asked(jar));
    expect(jar.get("authjs.email-code")!.length).toBeLessThan(1500);
    const oldest = sent[0]!.code;
    if (!sent.slice(1).some((s) => s.code === oldest)) expect(isRefused(await typeCode(jar, oldest))).toBe(true);
    expect(await typeCode(jar, sent[1]!.code)).toHaveSessionCookie();
  });

  it("an attacker guessing codes across new requests for one address gets exactly ten wrong codes compared, then one last on each further request; the owner's right code still signs her in; the same for known and unknown addresses", async () => {
    await testDb().user.create({ data: { email: "known@example.com", emailVerified: new Date() } });
    for (const email of ["known@example.com", "nobody@example.com"]) {
      // Four requests of the attacker's, each in its own browser (five tries each).
      const attacker = [];
      for (let i = 0; i < 4; i++) attacker.push(await asked(new CookieJar(), email));
      const answers: string[] = [];
      for (const request of attacker) {
        const wrong = request.code === "000000" ? "000001" : "000000";
        for (;;) {
          const res = await typeCode(request.jar, wrong);
          answers.push(isRefused(res) ? "wrong" : location(res).searchParams.get("error")!);
          if (!isRefused(res)) break;
        }
      }
      // Ten wrong codes within the address's budget (EMAIL_CODE_ADDRESS, 10 an hour): the first two
      // requests' five each. Then the budget is spent: each further request has one last try,
      // compared, and a wrong one ends it (RateLimited). Twelve comparisons in all, not twenty.
      expect(answers).toEqual([...Array(4).fill("wrong"), "Verification", ...Array(4).fill("wrong"), "Verification", "RateLimited", "RateLimited"]);
      expect(await testDb().verificationToken.count({ where: { identifier: email } })).toBe(0);
      // A guess after the last try finds nothing to compare with.
      expect(await typeCode(attacker[3]!.jar, attacker[3]!.code)).toHaveErrorRedirect("Verification");
      // The owner's own request: her right code is proved, whatever the budget (prove, then judge).
      const owner = await asked(new CookieJar(), email);
      const used = await typeCode(owner.jar, owner.code);
      expect(used).toHaveSessionCookie();
      await testDb().verificationToken.deleteMany();
    }
    // Another address is not affected: its wrong code leaves tries.
    const other = await asked(new CookieJar(), "other@example.com");
    expect(await refusalOf(other.jar, await typeCode(other.jar, other.code === "000000" ? "000001" : "000000"))).toMatch(/4 tries are left/);
    expect(await typeCode(other.jar, other.code)).toHaveSessionCookie();
  });

  it("an attacker who burns the address's budget of wrong codes from his browser does not keep the owner out: her right code signs her in, a mistyped one ends her request", async () => {
    const owner = await asked(new CookieJar(), "sam@example.com");
    for (let i = 0; i < 2; i++) {
      const attacker = await asked(new CookieJar(), "sam@example.com");
      const wrong = attacker.code === "000000" ? "000001" : "000000";
      for (let n = 0; n < 5; n++) await typeCode(attacker.jar, wrong);
    }
    expect(await testDb().verificationToken.count()).toBe(1);
    // Her request was never guessed at; the budget is spent, so a mistype is her request's last try.
    const typo = await asked(new CookieJar(), "sam@example.com");
    expect(await typeCode(typo.jar, typo.code === "000000" ? "000001" : "000000")).toHaveErrorRedirect("RateLimited");
    expect(await typeCode(typo.jar, typo.code)).toHaveErrorRedirect("Verification");
    // Her right code is compared and accepted.
    expect(await typeCode(owner.jar, owner.code)).toHaveSessionCookie();
    expect((await sessionOf(owner.jar))?.user.email).toBe("sam@example.com");
  });

  it("an attacker who types his own right code with the victim's request in the same cookie spends the victim's budget all the same: a guess at her code is never free", async () => {
    // A budget of three wrong codes, so that three rounds stay within the send limits. Each round: a
    // request for her address and one for his, named by one cookie; the code of his own e-mail is
    // right for his request and a guess at hers.
    configure(smtpEnv(smtp.sink.url, { AUTH_RATE_LIMIT_EMAIL_CODE_ADDRESS: "3/3600" }));
    for (let round = 0; round < 3; round++) {
      const jar = new CookieJar();
      const hers = await asked(jar, "sam@example.com");
      const his = await asked(jar, "mallory@example.com");
      if (his.code === hers.code) continue;
      expect(await typeCode(jar, his.code)).toHaveSessionCookie();
    }
    // Three guesses at her codes were compared: her budget is spent — a wrong code now ends her
    // request at once — and his is untouched: his wrong code leaves tries.
    const owner = await asked(new CookieJar(), "sam@example.com");
    expect(await typeCode(owner.jar, owner.code === "000000" ? "000001" : "000000")).toHaveErrorRedirect("RateLimited");
    const attacker = await asked(new CookieJar(), "mallory@example.com");
    expect(isRefused(await typeCode(attacker.jar, attacker.code === "000000" ? "000001" : "000000"))).toBe(true);
    expect(await typeCode(attacker.jar, attacker.code)).toHaveSessionCookie();
  });

  it("the honest user who mistypes twice, asks again and mistypes twice more is never refused", async () => {
    const first = await asked();
    const wrong = first.code === "000000" ? "000001" : "000000";
    for (let i = 0; i < 2; i++) expect(isRefused(await typeCode(first.jar, wrong))).toBe(true);
    const second = await asked(first.jar);
    const wrong2 = second.code === "000000" ? "000001" : "000000";
    for (let i = 0; i < 2; i++) expect(isRefused(await typeCode(first.jar, wrong2 === first.code ? "000002" : wrong2))).toBe(true);
    expect(await typeCode(first.jar, second.code)).toHaveSessionCookie();
  });

  it("JSON mode: a right code answers {url} with the session cookie", async () => {
    const { jar, code } = await asked();
    const res = await typeCode(jar, code, { headers: { "X-Auth-Return-Redirect": "1" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: `${ORIGIN}/welcome?callbackUrl=%2Faccount` });
    expect(res).toHaveSessionCookie();
  });

  it("a known user signs in with the code and lands on the callback URL", async () => {
    await testDb().user.create({ data: { email: "sam@example.com", emailVerified: new Date() } });
    const { jar, code } = await asked();
    expect(await typeCode(jar, code)).toHaveRedirect(`${ORIGIN}/account`);
  });

  it("a visitor with an Arabic keyboard types the code in Arabic-Indic digits (or Persian, or full-width, spaced): it signs her in", async () => {
    const arabic = (code: string) => [...code].map((d) => String.fromCodePoint(0x0660 + Number(d))).join("");
    const persian = (code: string) => [...code].map((d) => String.fromCodePoint(0x06f0 + Number(d))).join("");
    const fullWidth = (code: string) => [...code].map((d) => String.fromCodePoint(0xff10 + Number(d))).join("");
    for (const [i, write] of [arabic, persian, (c: string) => `${fullWidth(c.slice(0, 3))} ${fullWidth(c.slice(3))}`].entries()) {
      const { jar, code } = await asked(new CookieJar(), `sam${i}@example.com`);
      const res = await typeCode(jar, write(code));
      expect(res).toHaveSessionCookie();
      expect((await sessionOf(jar))?.user.email).toBe(`sam${i}@example.com`);
    }
  });

  it("a code POST without a valid CSRF token changes nothing and uses no try", async () => {
    const { jar, code } = await asked();
    expect(await typeCode(jar, code, { csrf: null })).toHaveErrorRedirect("MissingCSRF");
    expect(await typeCode(jar, code, { csrf: "f".repeat(64) })).toHaveErrorRedirect("MissingCSRF");
    const [row] = await testDb().verificationToken.findMany();
    expect(row!.codeAttempts).toBe(0);
    expect(await testDb().user.count()).toBe(0);
    expect(await typeCode(jar, code)).toHaveSessionCookie();
  });

  it("AUTH_EMAIL_CODE=false: the e-mail carries only the link; no cookie, no form", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_EMAIL_CODE: "false" }));
    const jar = new CookieJar();
    const res = await requestLink(jar, { email: "sam@example.com" });
    const [message] = await smtp.sink.waitFor(1);
    expect(message!.text).not.toMatch(/code/i);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("authjs.email-code"))).toBe(false);
    expect(await codeFormOf(jar)).toBeNull();
    expect((await testDb().verificationToken.findFirstOrThrow()).codeHash).toBeNull();
  });

  it("a code never outlives a shorter link (AUTH_EMAIL_MAX_AGE=120)", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_EMAIL_MAX_AGE: "120" }));
    const { message } = await asked();
    expect(message.text).toMatch(/The code expires in 2 minutes/);
    const row = await testDb().verificationToken.findFirstOrThrow();
    expect(row.codeExpires!.getTime()).toBeLessThanOrEqual(row.expires.getTime());
  });

  it("on https the cookie is __Host-authjs.email-code", async () => {
    configure(smtpEnv(smtp.sink.url, { AUTH_URL: "https://app.example.com" }));
    const jar = new CookieJar();
    const res = await requestLink(jar, { email: "sam@example.com" }, { headers: { Origin: "https://app.example.com" } });
    const cookie = res.headers.getSetCookie().find((c) => c.includes("email-code"))!;
    expect(cookie).toMatch(/^__Host-authjs\.email-code=/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).not.toMatch(/Domain=/);
    expect(location(res).pathname).toBe("/auth/verify-request");
  });

  it("the dev outbox (no SMTP server, not production) keeps and shows the code", async () => {
    configure({ AUTH_EMAIL_SERVER: undefined, AUTH_EMAIL_FROM: undefined });
    const jar = new CookieJar();
    const res = await requestLink(jar, { email: "dev@example.com" });
    expect(location(res).pathname).toBe("/auth/verify-request");
    const [stored] = await listOutbox(getConfig().dataDir, 1);
    expect(stored!.to).toBe("dev@example.com");
    expect(stored!.code).toMatch(/^\d{6}$/);
    expect(stored!.text).toContain(stored!.code!);
    expect(await typeCode(jar, stored!.code!)).toHaveSessionCookie();
  });
});
