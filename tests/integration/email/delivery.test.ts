// When the mail cannot be sent: a refused connection, a server that rejects the recipient or the
// message, a server that never answers. Each gives EmailSignin on the sign-in page and leaves no
// token behind. And the dev outbox, which is what `npm run dev` uses without SMTP.
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { getConfig } from "../../../app/auth/core/config.server.ts";
import { listOutbox } from "../../../app/mail/outbox.server.ts";
import { SMTP_TIMEOUTS } from "../../../app/mail/smtp.server.ts";
import * as outboxRoute from "../../../app/routes/dev/outbox.tsx";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, get } from "../../support/http.ts";
import { refusedUrl, startSilentServer } from "../../support/smtp-sink.ts";
import { configure, location, openLink, ORIGIN, requestLink, sessionOf, smtpEnv, useSmtpSink } from "./helpers.ts";

const smtp = useSmtpSink(null);

async function expectEmailSignin(res: Response) {
  expect(res).toHaveErrorRedirect("EmailSignin");
  expect(location(res).pathname).toBe("/auth/signin");
  expect(res).not.toHaveSessionCookie();
  // No unusable token is left behind, and asking created nobody.
  expect(await testDb().verificationToken.count()).toBe(0);
  expect(await testDb().user.count()).toBe(0);
}

describe(`SMTP failures (${dbLabel})`, () => {
  it("a refused connection is EmailSignin", async () => {
    configure(smtpEnv(await refusedUrl()));
    const started = performance.now();
    await expectEmailSignin(await requestLink(new CookieJar(), { email: "refused@example.com" }));
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("a rejected recipient (550) is EmailSignin", async () => {
    configure(smtpEnv(smtp.sink.url));
    smtp.sink.reject("rcpt", 550);
    await expectEmailSignin(await requestLink(new CookieJar(), { email: "rejected@example.com" }));
    expect(smtp.sink.messages).toHaveLength(0);
  });

  it("a message refused after DATA (451) is EmailSignin", async () => {
    configure(smtpEnv(smtp.sink.url));
    smtp.sink.reject("data", 451);
    await expectEmailSignin(await requestLink(new CookieJar(), { email: "deferred@example.com" }));
    expect(smtp.sink.messages).toHaveLength(0);
  });

  it("a server that never greets is EmailSignin after the greeting timeout, not nodemailer's 30 s", async () => {
    const silent = await startSilentServer();
    try {
      configure(smtpEnv(silent.url));
      const started = performance.now();
      await expectEmailSignin(await requestLink(new CookieJar(), { email: "slow@example.com" }));
      const elapsed = performance.now() - started;
      expect(silent.connections()).toBe(1);
      expect(elapsed).toBeGreaterThanOrEqual(SMTP_TIMEOUTS.greetingTimeout - 100);
      expect(elapsed).toBeLessThan(SMTP_TIMEOUTS.greetingTimeout + 2_000);
    } finally {
      await silent.close();
    }
  });

  it("timeouts can be tuned in AUTH_EMAIL_SERVER's query", async () => {
    const silent = await startSilentServer();
    try {
      configure(smtpEnv(`${silent.url}/?greetingTimeout=300`));
      const started = performance.now();
      await expectEmailSignin(await requestLink(new CookieJar(), { email: "slow@example.com" }));
      expect(performance.now() - started).toBeLessThan(1_500);
    } finally {
      await silent.close();
    }
  });

  it("after a failure the next request works", async () => {
    configure(smtpEnv(smtp.sink.url));
    smtp.sink.reject("data", 451);
    await expectEmailSignin(await requestLink(new CookieJar(), { email: "retry@example.com" }));
    smtp.sink.reject(null);
    const res = await requestLink(new CookieJar(), { email: "retry@example.com" });
    expect(location(res).pathname).toBe("/auth/verify-request");
    expect(await testDb().verificationToken.count()).toBe(1);
  });
});

describe(`the dev outbox (${dbLabel})`, () => {
  beforeEach(() => {
    configure({ AUTH_EMAIL_SERVER: undefined, AUTH_EMAIL_FROM: undefined });
    rmSync(path.join(getConfig().dataDir, "outbox"), { recursive: true, force: true });
  });

  it("keeps each message in the data folder, and its link signs in", async () => {
    const res = await requestLink(new CookieJar(), { email: "Dev@Example.com", callbackUrl: "/account" });
    expect(location(res).pathname).toBe("/auth/verify-request");

    const folder = path.join(getConfig().dataDir, "outbox");
    expect(readdirSync(folder).filter((n) => n.endsWith(".json"))).toHaveLength(1);
    const [message] = await listOutbox(getConfig().dataDir);
    expect(message).toMatchObject({ to: "dev@example.com", subject: "Sign in to Vestibule" });
    expect(message!.text).toContain(message!.link!);
    expect(message!.html).toContain("dev@example.com");

    const device = new CookieJar();
    expect(await openLink(message!.link!, device)).toHaveRedirect(`${ORIGIN}/welcome?callbackUrl=%2Faccount`);
    expect((await sessionOf(device))?.user.email).toBe("dev@example.com");
  });

  it("/dev/outbox lists the messages, newest first", async () => {
    await requestLink(new CookieJar(), { email: "first@example.com" });
    await requestLink(new CookieJar(), { email: "second@example.com" });
    const res = await callRoute(outboxRoute.loader, get("/dev/outbox"));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { smtp: boolean; messages: { to: string; link: string }[] };
    expect(body.smtp).toBe(false);
    expect(body.messages.map((m) => m.to)).toEqual(["second@example.com", "first@example.com"]);
    expect(body.messages[0]!.link).toMatch(/^http:\/\/localhost:3000\/auth\/callback\/email\?token=[0-9a-f]{64}&/);
  });

  it("prints its line on the console, but not with VESTIBULE_LOG=silent (no log line at all)", async () => {
    const printed: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(" ")));
    const before = process.env.VESTIBULE_LOG;
    try {
      delete process.env.VESTIBULE_LOG;
      await requestLink(new CookieJar(), { email: "loud@example.com" });
      expect(printed.filter((l) => l.includes("dev outbox") && l.includes("loud@example.com"))).toHaveLength(1);
      process.env.VESTIBULE_LOG = "silent";
      await requestLink(new CookieJar(), { email: "quiet@example.com" });
      expect(printed.filter((l) => l.includes("quiet@example.com"))).toEqual([]);
      expect((await listOutbox(getConfig().dataDir)).map((m) => m.to)).toContain("quiet@example.com");
    } finally {
      spy.mockRestore();
      if (before === undefined) delete process.env.VESTIBULE_LOG;
      else process.env.VESTIBULE_LOG = before;
    }
  });

  it("/dev/outbox answers 404 with a production configuration", async () => {
    configure({ NODE_ENV: "production", AUTH_URL: "https://app.example.com" });
    const res = await callRoute(outboxRoute.loader, get("/dev/outbox"));
    expect(res.status).toBe(404);
  });
});
