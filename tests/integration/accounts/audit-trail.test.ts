// The user's own audit trail: /account shows the last 20 auth events with
// time, event, device and client address, and no event or log line ever holds a secret — checked
// after a full credentials sign-in, an e-mail link sign-in and an OAuth sign-in.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { openToken } from "../../../app/auth/oauth/tokens.server.ts";
import * as account from "../../../app/routes/account.tsx";
import * as callbackRoute from "../../../app/routes/auth/callback";
import { createUser, PASSWORD } from "../../support/auth.ts";
import { dbLabel, testDb } from "../../support/db.ts";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http.ts";
import { ALICE, startTestIdp, type TestIdp } from "../../support/idp.ts";
import { signInThroughIdp } from "../../support/oauth-flow.ts";
import { linkIn, waitForMessages } from "../../support/smtp-sink.ts";
import { openLink, requestLink, useSmtpSink } from "../email/helpers.ts";

const DEVICE = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
const WRONG_PASSWORD = "not-the-password-8f3a1c";

const smtp = useSmtpSink();
let idp: TestIdp;
beforeAll(async () => {
  idp = await startTestIdp();
});
afterAll(() => idp?.stop());
beforeEach(() => idp.configure());

/** Every line written through console while the flows run (the app logs through console). */
let lines: string[] = [];
beforeEach(() => {
  lines = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
    });
  }
});
afterEach(() => vi.restoreAllMocks());

async function credentialsSignIn(jar: CookieJar, password: string) {
  const csrfToken = await fetchCsrf(jar);
  const res = await callRoute(
    callbackRoute.action,
    post("/auth/callback/credentials", { csrfToken, email: "ada@example.com", password }, { jar, headers: { "User-Agent": DEVICE } }),
    { provider: "credentials" },
  );
  jar.apply(res);
  return res;
}

function cookieValues(jar: CookieJar) {
  return jar.names().map((n) => decodeURIComponent(jar.get(n)!)).filter((v) => v.length >= 16);
}

describe(`the audit trail (${dbLabel})`, () => {
  it("/account shows the user's last 20 events with time, event, device and address", async () => {
    await createUser();
    const jar = new CookieJar();
    expect((await credentialsSignIn(jar, WRONG_PASSWORD)).headers.get("Location")).toContain("error=CredentialsSignin");
    expect((await credentialsSignIn(jar, PASSWORD)).status).toBe(302);
    const page = await callRoute(account.loader, get("/account", { jar }));
    const { events } = (await page.json()) as { events: { type: string; at: string; ip: string | null; userAgent: string | null; method: string | null }[] };
    expect(events[0]).toMatchObject({ type: "signin", userAgent: DEVICE, method: "Credentials" });
    expect(Date.parse(events[0]!.at)).toBeGreaterThan(Date.now() - 60_000);
    // A refused attempt names the device too: the owner can tell whose it was.
    expect(events.find((e) => e.type === "signin-failed")).toMatchObject({ userAgent: DEVICE });

    const user = await testDb().user.findFirstOrThrow();
    await testDb().authEvent.createMany({ data: Array.from({ length: 30 }, (_, i) => ({ type: "signout", userId: user.id, at: new Date(Date.now() - (i + 1) * 60_000) })) });
    await testDb().authEvent.create({ data: { type: "signin", userId: (await createUser("grace@example.com", "Grace")).id } });
    const again = (await (await callRoute(account.loader, get("/account", { jar }))).json()) as { events: { type: string; at: string }[] };
    expect(again.events).toHaveLength(20);
    expect(again.events[0]!.type).toBe("signin");
    const times = again.events.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it("no event and no log line holds a password, an e-mail link token, a session cookie or an OAuth code or token", async () => {
    const secrets: string[] = [PASSWORD, WRONG_PASSWORD, ALICE.password];

    // Credentials: a refused password, then the right one.
    await createUser();
    const laptop = new CookieJar();
    await credentialsSignIn(laptop, WRONG_PASSWORD);
    await credentialsSignIn(laptop, PASSWORD);
    secrets.push(...cookieValues(laptop));

    // E-mail link.
    const phone = new CookieJar();
    await requestLink(phone, { email: "ada@example.com" });
    // The sign-in link, not the security e-mail of the laptop's sign-in from a new browser (ADR 081).
    const link = linkIn((await waitForMessages(smtp.sink, 1))[0]!);
    secrets.push(link.searchParams.get("token")!);
    const opened = await openLink(link, phone);
    expect(opened.status).toBeLessThan(400);
    secrets.push(...cookieValues(phone));

    // OAuth (the test IdP, OIDC with PKCE): the code, the check cookies and the tokens it returned.
    const tablet = new CookieJar();
    const { answer, start } = await signInThroughIdp(tablet, { email: ALICE.email, password: ALICE.password });
    const returned = answer.kind === "redirect" ? new URL(answer.url).searchParams : new URLSearchParams(answer.fields);
    secrets.push(returned.get("code")!);
    secrets.push(...start.headers.getSetCookie().map((c) => decodeURIComponent(c.slice(c.indexOf("=") + 1).split(";")[0]!)).filter((v) => v.length >= 16));
    secrets.push(...cookieValues(tablet));
    const alice = await testDb().account.findFirstOrThrow({ where: { provider: "oidc" } });
    for (const field of ["accessToken", "refreshToken", "idToken"] as const) {
      const raw = await openToken(alice[field], { provider: "oidc", providerAccountId: alice.providerAccountId, field });
      if (raw) secrets.push(raw, alice[field]!);
    }

    const users = await testDb().user.count();
    expect(users).toBe(2);
    const events = await testDb().authEvent.findMany();
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["signin-failed", "signin", "email-sent", "user-created"]));
    expect(events.filter((e) => e.type === "signin")).toHaveLength(3);
    const stored = JSON.stringify(events);
    const logged = lines.join("\n");
    expect(secrets.filter((s) => s.length >= 8).length).toBeGreaterThanOrEqual(9);
    for (const secret of secrets.filter((s) => s.length >= 8)) {
      expect(stored.includes(secret), `an AuthEvent holds ${secret.slice(0, 12)}…`).toBe(false);
      expect(logged.includes(secret), `a log line holds ${secret.slice(0, 12)}…`).toBe(false);
    }
  });
});
