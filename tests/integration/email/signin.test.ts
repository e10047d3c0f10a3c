// E-mail link sign-in end to end: the real route modules, a real SMTP server on loopback, the real
// database. Each test reads the message the server received and follows its link.
import { createHash } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { errorPageData } from "../../../app/auth/core/page-session.server.ts";
import { providersResponse } from "../../../app/auth/signin/endpoint.server.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import * as errorRoute from "../../../app/routes/auth/error.tsx";
import { runWithLocale, t } from "../../../app/i18n/t.server.ts";
import { linkIn, waitForMessages } from "../../support/smtp-sink.ts";
import { createUser } from "../../support/auth.ts";
import { enrolled } from "../two-factor/helpers.ts";
import { configure, location, openLink, ORIGIN, requestLink, sessionOf, smtpEnv, TEST_AUTH_SECRET, useSmtpSink } from "./helpers.ts";

const smtp = useSmtpSink();

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

describe(`e-mail sign-in (${dbLabel})`, () => {
  it("is listed as an e-mail provider", async () => {
    const body = (await providersResponse(get("/auth/providers")).json()) as Record<string, Record<string, string>>;
    expect(body.email).toEqual({
      id: "email",
      name: "Email",
      type: "email",
      signinUrl: `${ORIGIN}/auth/signin/email`,
      callbackUrl: `${ORIGIN}/auth/callback/email`,
    });
  });

  it("sends one message to the address, stores only a hash, and signs a new user in from another browser", async () => {
    const res = await requestLink(new CookieJar(), { email: "  New.Person@Example.COM ", callbackUrl: "/account?tab=1" });
    expect(res).toHaveRedirect(`${ORIGIN}/auth/verify-request?provider=email&type=email`);
    expect(res).not.toHaveSessionCookie();

    const [message] = await smtp.sink.waitFor(1);
    expect(smtp.sink.messages).toHaveLength(1);
    // The recipient is exactly the normalised address: envelope and header.
    expect(message!.envelope.to).toEqual(["new.person@example.com"]);
    expect(message!.envelope.from).toBe("no-reply@vestibule.test");
    expect(message!.to).toBe("new.person@example.com");
    expect(message!.headers.get("cc")).toBeUndefined();
    expect(message!.headers.get("bcc")).toBeUndefined();
    expect(message!.subject).toBe("Sign in to Vestibule");

    const link = linkIn(message!);
    expect(link.origin + link.pathname).toBe(`${ORIGIN}/auth/callback/email`);
    expect([...link.searchParams.keys()]).toEqual(["token", "email", "callbackUrl"]);
    const token = link.searchParams.get("token")!;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(link.searchParams.get("email")).toBe("new.person@example.com");
    expect(link.searchParams.get("callbackUrl")).toBe(`${ORIGIN}/account?tab=1`);

    // Plain text and HTML both carry the link, the site, the address and the lifetime.
    for (const part of [message!.text!, message!.html!]) {
      expect(part).toContain("Vestibule");
      expect(part).toContain("localhost:3000");
      expect(part).toContain("new.person@example.com");
      expect(part).toContain("24 hours");
    }
    expect(message!.text).toContain(link.href);
    expect(message!.html).toContain(link.href.replace(/&/g, "&amp;"));
    expect(message!.html).toMatch(/<html lang="en">/);
    expect(message!.html).toMatch(/<title>Sign in to Vestibule<\/title>/);

    // Only SHA-256(token + secret) is stored, with a 24 h expiry.
    const rows = await testDb().verificationToken.findMany();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.identifier).toBe("new.person@example.com");
    expect(rows[0]!.tokenHash).toBe(sha256(token + TEST_AUTH_SECRET));
    expect(rows[0]!.purpose).toBe("signin");
    expect(JSON.stringify(rows)).not.toContain(token);
    const lifetime = rows[0]!.expires.getTime() - rows[0]!.createdAt.getTime();
    expect(Math.abs(lifetime - 24 * 3600 * 1000)).toBeLessThan(5_000);
    expect(await testDb().user.count()).toBe(0);

    // Another device: a fresh jar with no cookies at all.
    const device = new CookieJar();
    const opened = await openLink(link, device);
    expect(opened).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=${encodeURIComponent("/account?tab=1")}`);
    expect(opened).toHaveSessionCookie();
    expect((await sessionOf(device))?.user.email).toBe("new.person@example.com");

    const user = await testDb().user.findUniqueOrThrow({ where: { email: "new.person@example.com" } });
    expect(user.emailVerified).toBeInstanceOf(Date);
    expect(await testDb().verificationToken.count()).toBe(0);
    expect(await testDb().authEvent.count({ where: { type: "user-created", userId: user.id } })).toBe(1);
  });

  it("signs an existing user in on the callback URL and marks the address verified", async () => {
    const existing = await testDb().user.create({ data: { email: "ada@example.com", name: "Ada" } });
    await requestLink(new CookieJar(), { email: "ada@example.com", callbackUrl: "/account" });
    const [message] = await smtp.sink.waitFor(1);
    const device = new CookieJar();
    const res = await openLink(linkIn(message!), device);
    expect(res).toHaveRedirect(`${ORIGIN}/account`);
    expect(res).toHaveSessionCookie();
    expect((await sessionOf(device))?.user).toMatchObject({ email: "ada@example.com", name: "Ada" });
    const after = await testDb().user.findUniqueOrThrow({ where: { id: existing.id } });
    expect(after.emailVerified).toBeInstanceOf(Date);
    expect(await testDb().user.count()).toBe(1);
  });

  it("answers known and unknown addresses alike (no enumeration)", async () => {
    await testDb().user.create({ data: { email: "known@example.com", emailVerified: new Date() } });
    const answers = [];
    for (const email of ["known@example.com", "unknown@example.com"]) {
      const res = await requestLink(new CookieJar(), { email });
      answers.push({
        status: res.status,
        location: res.headers.get("Location"),
        cookies: res.headers.getSetCookie().map((c) => c.split("=")[0]),
        body: await res.text(),
      });
    }
    expect(answers[0]).toEqual(answers[1]);
    await smtp.sink.waitFor(2);
    expect(smtp.sink.messages.map((m) => m.envelope.to)).toEqual([["known@example.com"], ["unknown@example.com"]]);
    expect(smtp.sink.messages[0]!.subject).toBe(smtp.sink.messages[1]!.subject);
    // Asking never creates a user.
    expect(await testDb().user.count()).toBe(1);
  });

  it("answers {url} in JSON-redirect mode", async () => {
    const res = await requestLink(new CookieJar(), { email: "json@example.com", json: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ url: `${ORIGIN}/auth/verify-request?provider=email&type=email` });
    await smtp.sink.waitFor(1);
  });

  it("refuses a POST without the CSRF token and sends nothing", async () => {
    const res = await requestLink(new CookieJar(), { email: "csrf@example.com", csrfToken: null });
    expect(res).toHaveErrorRedirect("MissingCSRF");
    expect(smtp.sink.messages).toHaveLength(0);
    expect(await testDb().verificationToken.count()).toBe(0);
  });

  it("a used link is Verification (403) the second time, in any browser", async () => {
    await requestLink(new CookieJar(), { email: "twice@example.com" });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    expect(await openLink(link)).toHaveSessionCookie();
    const again = await openLink(link);
    expect(again).toHaveRedirect(`${ORIGIN}/auth/error?error=Verification`);
    expect(again).not.toHaveSessionCookie();
    const page = errorPageData(get("/auth/error?error=Verification"));
    expect(page.status).toBe(403);
    expect(page.message).toBe("The sign-in link is no longer valid.");
  });

  it("a signed-in visitor who opens her used sign-in link again reads that she is already signed in, with the way to her account, in en/de/fr/ar — not 'Unable to sign in'", async () => {
    await requestLink(new CookieJar(), { email: "twice@example.com" });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    const jar = new CookieJar();
    expect(await openLink(link, jar)).toHaveSessionCookie();
    const again = await openLink(link, jar);
    expect(again).toHaveRedirect(`${ORIGIN}/auth/error?error=Verification`);
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const res = await runWithLocale(locale, () => callRoute(errorRoute.loader, get("/auth/error?error=Verification", { jar })));
      expect(res.status).toBe(403);
      const page = (await res.json()) as { heading: string; message: string; next: { href: string; label: string } | null };
      runWithLocale(locale, () => {
        expect(page.heading).toBe(t("errorPage.VerificationSignedIn.heading"));
        expect(page.message).toBe(t("errorPage.VerificationSignedIn.message"));
        expect(page.next).toEqual({ href: "/account", label: t("common.accountLink") });
      });
    }
    // Signed out, the same link is the plain Verification page, with the way to sign in.
    const stranger = (await (await callRoute(errorRoute.loader, get("/auth/error?error=Verification"))).json()) as { message: string; next: unknown };
    expect(stranger).toMatchObject({ message: "The sign-in link is no longer valid.", next: null });
  });

  it("a used sign-in link opened while this browser's sign-in waits for its second step says so, with the way to finish it, in en/de/fr/ar", async () => {
    await createUser("ada@example.com");
    await enrolled("ada@example.com");
    await requestLink(new CookieJar(), { email: "ada@example.com" });
    // The sign-in e-mail, not the "second factor on" notice the set-up sent.
    const link = linkIn((await waitForMessages(smtp.sink, 1))[0]!);
    const jar = new CookieJar();
    expect(await openLink(link, jar)).toHaveRedirect(`${ORIGIN}/auth/two-factor`);
    expect(await openLink(link, jar)).toHaveRedirect(`${ORIGIN}/auth/error?error=Verification`);
    for (const locale of ["en", "de", "fr", "ar"] as const) {
      const page = (await (await runWithLocale(locale, () => callRoute(errorRoute.loader, get("/auth/error?error=Verification", { jar })))).json()) as {
        heading: string;
        message: string;
        next: { href: string; label: string } | null;
      };
      runWithLocale(locale, () => {
        expect(page.heading).toBe(t("errorPage.VerificationPending.heading"));
        expect(page.message).toBe(t("errorPage.VerificationPending.message"));
        expect(page.next).toEqual({ href: "/auth/two-factor", label: t("errorPage.VerificationPending.next") });
      });
    }
    // The set-up moved the clock on a step (its enrolment code's): back to the real one.
    vi.useRealTimers();
  });

  it("an expired link is Verification and is removed", async () => {
    await requestLink(new CookieJar(), { email: "late@example.com" });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    await testDb().verificationToken.updateMany({ data: { expires: new Date(Date.now() - 1000) } });
    const res = await openLink(link);
    expect(res).toHaveErrorRedirect("Verification");
    expect(res).not.toHaveSessionCookie();
    expect(await testDb().verificationToken.count()).toBe(0);
    expect(await testDb().user.count()).toBe(0);
  });

  it("honours AUTH_EMAIL_MAX_AGE", async () => {
    configure({ AUTH_EMAIL_MAX_AGE: "900" });
    await requestLink(new CookieJar(), { email: "short@example.com" });
    const [message] = await smtp.sink.waitFor(1);
    expect(message!.text).toContain("expires in 15 minutes");
    const row = await testDb().verificationToken.findFirstOrThrow();
    expect(Math.abs(row.expires.getTime() - row.createdAt.getTime() - 900_000)).toBeLessThan(5_000);
  });

  it("a link for another address, a changed token, or missing parameters are Verification; the real link still works", async () => {
    await requestLink(new CookieJar(), { email: "owner@example.com" });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    const token = link.searchParams.get("token")!;

    const variants: Record<string, string | null>[] = [
      { email: "attacker@example.com" },
      { email: "owner@example.com,attacker@example.com" },
      { email: null },
      { token: token.slice(0, -1) + (token.endsWith("0") ? "1" : "0") },
      { token: token.toUpperCase() },
      { token: null },
      { token: "" },
    ];
    for (const change of variants) {
      const tampered = new URL(link);
      for (const [k, v] of Object.entries(change)) {
        if (v === null) tampered.searchParams.delete(k);
        else tampered.searchParams.set(k, v);
      }
      const res = await openLink(tampered);
      expect(res, JSON.stringify(change)).toHaveErrorRedirect("Verification");
      expect(res).not.toHaveSessionCookie();
    }
    expect(await testDb().user.count()).toBe(0);
    expect(await openLink(link)).toHaveSessionCookie();
  });

  it("the link's callbackUrl is checked again when it is used", async () => {
    await requestLink(new CookieJar(), { email: "cb@example.com", callbackUrl: "https://evil.example/steal" });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    expect(link.searchParams.get("callbackUrl")).toBe(`${ORIGIN}/`);

    await testDb().user.create({ data: { email: "cb2@example.com", emailVerified: new Date() } });
    await requestLink(new CookieJar(), { email: "cb2@example.com" });
    const second = linkIn((await smtp.sink.waitFor(2))[1]!);
    second.searchParams.set("callbackUrl", "https://evil.example/steal");
    const res = await openLink(second);
    expect(res).toHaveRedirect(`${ORIGIN}/`);
  });

  it("keeps working after AUTH_SECRET rotation (old secret listed second)", async () => {
    await requestLink(new CookieJar(), { email: "rotate@example.com" });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    configure({ AUTH_SECRET: `a-brand-new-secret-that-is-long-enough-0123,${TEST_AUTH_SECRET}` });
    expect(await openLink(link)).toHaveSessionCookie();
  });

  it("with a secret no longer listed, old links are dead", async () => {
    await requestLink(new CookieJar(), { email: "rotated-out@example.com" });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    configure({ AUTH_SECRET: "a-brand-new-secret-that-is-long-enough-0123" });
    expect(await openLink(link)).toHaveErrorRedirect("Verification");
  });
});

describe(`the link's origin (${dbLabel})`, () => {
  const forwarded = { "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https" };

  it("comes from AUTH_URL, whatever the request's headers say", async () => {
    configure({ AUTH_URL: "https://app.example.com" });
    await requestLink(new CookieJar(), { email: "origin@example.com" }, { headers: { ...forwarded, Host: "evil.example" } });
    const link = linkIn((await smtp.sink.waitFor(1))[0]!);
    expect(link.origin).toBe("https://app.example.com");
    expect(link.searchParams.get("callbackUrl")).toBe("https://app.example.com/");
  });

  it("ignores X-Forwarded-* without AUTH_TRUST_HOST", async () => {
    await requestLink(new CookieJar(), { email: "origin@example.com" }, { headers: forwarded });
    expect(linkIn((await smtp.sink.waitFor(1))[0]!).origin).toBe(ORIGIN);
  });

  it("uses X-Forwarded-* with AUTH_TRUST_HOST=true when AUTH_ALLOWED_HOSTS lists the host", async () => {
    configure({ AUTH_TRUST_HOST: "true", AUTH_ALLOWED_HOSTS: "app.example.com" });
    await requestLink(new CookieJar(), { email: "origin@example.com" }, { headers: { "X-Forwarded-Host": "app.example.com", "X-Forwarded-Proto": "https" } });
    expect(linkIn((await smtp.sink.waitFor(1))[0]!).origin).toBe("https://app.example.com");
  });
});

describe(`twenty concurrent clicks on one link (${dbLabel})`, () => {
  for (const strategy of ["jwt", "database"] as const) {
    it(`give exactly one session (${strategy} sessions)`, async () => {
      configure({ AUTH_SESSION_STRATEGY: strategy });
      await requestLink(new CookieJar(), { email: "race@example.com" });
      const link = linkIn((await smtp.sink.waitFor(1))[0]!);

      const results = await Promise.all(Array.from({ length: 20 }, () => openLink(link)));
      const winners = results.filter((r) => r.headers.getSetCookie().some((c) => /authjs\.session-token=[^;]/.test(c)));
      expect(winners).toHaveLength(1);
      expect(location(winners[0]!).pathname).toBe("/welcome");
      const losers = results.filter((r) => r !== winners[0]);
      for (const r of losers) expect(r).toHaveErrorRedirect("Verification");

      expect(await testDb().user.count()).toBe(1);
      expect(await testDb().authEvent.count({ where: { type: "signin" } })).toBe(1);
      if (strategy === "database") expect(await testDb().session.count()).toBe(1);
      expect(await testDb().verificationToken.count()).toBe(0);
    });
  }

  it("two links for one new address used at the same moment make one user", async () => {
    await requestLink(new CookieJar(), { email: "pair@example.com" });
    await requestLink(new CookieJar(), { email: "pair@example.com" });
    const links = (await smtp.sink.waitFor(2)).map(linkIn);
    const results = await Promise.all(links.map((l) => openLink(l)));
    for (const r of results) expect(r).toHaveSessionCookie();
    expect(await testDb().user.count()).toBe(1);
    expect(results.filter((r) => location(r).pathname === "/welcome").length).toBeGreaterThanOrEqual(1);
  });
});

describe(`rate limits (${dbLabel})`, () => {
  it("allow five links per address per hour, then RateLimited without sending", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await requestLink(new CookieJar(), { email: "busy@example.com" });
      expect(location(res).pathname).toBe("/auth/verify-request");
    }
    const sixth = await requestLink(new CookieJar(), { email: "BUSY@example.com" });
    expect(sixth).toHaveErrorRedirect("RateLimited");
    expect(location(sixth).pathname).toBe("/auth/signin");
    // The address's budget of e-mails, not this visitor's attempts (ADR 111): the page names it.
    expect(location(sixth).searchParams.get("limit")).toBe("address");
    await smtp.sink.waitFor(5);
    expect(smtp.sink.messages).toHaveLength(5);
    expect(await testDb().verificationToken.count()).toBe(5);
    // Another address is not affected.
    expect(location(await requestLink(new CookieJar(), { email: "calm@example.com" })).pathname).toBe("/auth/verify-request");
  });

  it("allow twenty links per client per hour across addresses", async () => {
    const headers = { "X-Vestibule-Remote-Addr": "203.0.113.9" };
    for (let i = 0; i < 20; i++) {
      const res = await requestLink(new CookieJar(), { email: `person${i}@example.com` }, { headers });
      expect(location(res).pathname).toBe("/auth/verify-request");
    }
    const over = await requestLink(new CookieJar(), { email: "person20@example.com" }, { headers });
    expect(over).toHaveErrorRedirect("RateLimited");
    expect(location(over).searchParams.get("limit")).toBe("network");
    // The refused request did not spend that address's own budget.
    const other = await requestLink(new CookieJar(), { email: "person20@example.com" }, { headers: { "X-Vestibule-Remote-Addr": "203.0.113.10" } });
    expect(location(other).pathname).toBe("/auth/verify-request");
    await smtp.sink.waitFor(21);
    expect(smtp.sink.messages).toHaveLength(21);
  });
});

describe(`where e-mail sign-in is offered (${dbLabel})`, () => {
  it("not in production without SMTP; in production with it", async () => {
    configure({ NODE_ENV: "production", AUTH_URL: "https://app.example.com", AUTH_EMAIL_SERVER: undefined, AUTH_EMAIL_FROM: undefined });
    const off = (await providersResponse(get("/auth/providers")).json()) as Record<string, unknown>;
    expect(off.email).toBeUndefined();
    const res = await requestLink(new CookieJar(), { email: "prod@example.com" });
    expect(res.status).toBe(400);
    expect(await openLink(`${ORIGIN}/auth/callback/email?token=${"a".repeat(64)}&email=prod@example.com`).then((r) => r.status)).toBe(400);

    configure(smtpEnv(smtp.sink.url));
    expect(getConfig().production).toBe(true);
    const on = (await providersResponse(get("/auth/providers")).json()) as Record<string, unknown>;
    expect(on.email).toMatchObject({ type: "email" });
  });
});
