import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as signinRoute from "../../../app/routes/auth/signin";
import * as callbackRoute from "../../../app/routes/auth/callback";
import * as signoutRoute from "../../../app/routes/auth/signout";
import * as errorRoute from "../../../app/routes/auth/error";
import * as logRoute from "../../../app/routes/auth/log";
import * as providersRoute from "../../../app/routes/auth/providers";
import * as csrfRoute from "../../../app/routes/auth/csrf";
import * as sessionRoute from "../../../app/routes/auth/session";
import * as accountRoute from "../../../app/routes/account";
import * as welcomeRoute from "../../../app/routes/welcome";
import * as homeRoute from "../../../app/routes/home";
import { createUser, signIn, withEnv } from "../../support/auth";
import { resetDatabase, testDb } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, get, post } from "../../support/http";
import { LOCALES, renderPage, textOf } from "../../support/render-page";
import { runWithLocale, t } from "../../../app/i18n/t.server";
import { accountRefusal } from "../../support/account-refusal.ts";

let undoEnv: (() => void) | null = null;
afterEach(() => {
  undoEnv?.();
  undoEnv = null;
  vi.restoreAllMocks();
});
beforeEach(async () => {
  await resetDatabase();
});

describe("GET /auth/providers and /auth/csrf", () => {
  it("lists the enabled providers with absolute URLs", async () => {
    const body = await (await callRoute(providersRoute.loader, get("/auth/providers"))).json();
    expect(body.credentials).toEqual({
      id: "credentials",
      name: "Credentials",
      type: "credentials",
      signinUrl: "http://localhost:3000/auth/signin/credentials",
      callbackUrl: "http://localhost:3000/auth/callback/credentials",
    });
  });

  it("hides credentials when AUTH_CREDENTIALS=false", async () => {
    undoEnv = withEnv({ AUTH_CREDENTIALS: "false" });
    const body = await (await callRoute(providersRoute.loader, get("/auth/providers"))).json();
    expect(body.credentials).toBeUndefined();
  });

  it("sets the CSRF cookie only when it is missing or invalid", async () => {
    const jar = new CookieJar();
    const first = await callRoute(csrfRoute.loader, get("/auth/csrf", { jar }));
    expect(first.headers.getSetCookie()).toHaveLength(1);
    jar.apply(first);
    const again = await callRoute(csrfRoute.loader, get("/auth/csrf", { jar }));
    expect(again.headers.getSetCookie()).toHaveLength(0);
    expect((await again.json()).csrfToken).toBe((await first.json()).csrfToken);
    expect(again.headers.get("Cache-Control")).toBe("private, no-cache, no-store");
    expect((await callRoute(csrfRoute.action, post("/auth/csrf"))).status).toBe(400);
  });
});

describe("sign-in page", () => {
  describe("after a refused password, the address as typed (WCAG 3.3.7)", () => {
    const KEPT = /^authjs\.signin-email=/;
    const typed = "Ada@Example.com";

    it("rides in a 60-second HttpOnly cookie, never in the URL, never with the password", async () => {
      await createUser();
      const { res } = await signIn(new CookieJar(), typed, "wrong password");
      expect(res).toHaveErrorRedirect("CredentialsSignin");
      expect(res.headers.get("Location")).not.toMatch(/ada/i);
      const kept = res.headers.getSetCookie().filter((c) => KEPT.test(c));
      expect(kept).toEqual([`authjs.signin-email=${encodeURIComponent(typed)}; Max-Age=60; Path=/; HttpOnly; SameSite=Lax`]);
      expect(res.headers.getSetCookie().join("\n")).not.toContain("wrong");
    });

    it("is shown on step two and kept as long as step two keeps it (ADR 093); a malformed one is shown once and cleared", async () => {
      await createUser();
      const { jar } = await signIn(new CookieJar(), typed, "wrong password");
      const page = await callRoute(signinRoute.loader, get("/auth/signin?error=CredentialsSignin&code=credentials", { jar }));
      expect(await page.json()).toMatchObject({ email: typed, step: "methods" });
      expect(page.headers.getSetCookie().filter((c) => KEPT.test(c))).toEqual([
        `authjs.signin-email=${encodeURIComponent(typed)}; Max-Age=600; Path=/; HttpOnly; SameSite=Lax`,
      ]);

      const malformed = (await signIn(new CookieJar(), "ada at example.com", "wrong password")).jar;
      const once = await callRoute(signinRoute.loader, get("/auth/signin?error=CredentialsSignin&code=credentials", { jar: malformed }));
      expect(await once.json()).toMatchObject({ email: "ada at example.com", step: "address" });
      expect(once.headers.getSetCookie().filter((c) => KEPT.test(c))).toEqual([expect.stringMatching(/^authjs\.signin-email=; Max-Age=0;/)]);
      malformed.apply(once);
      expect(malformed.get("authjs.signin-email")).toBeUndefined();
      expect((await (await callRoute(signinRoute.loader, get("/auth/signin?error=CredentialsSignin", { jar: malformed }))).json()).email).toBe("");
    });

    it("is not kept after a sign-in that worked, nor for a JSON-mode client", async () => {
      await createUser();
      const ok = await signIn(new CookieJar(), typed);
      expect(ok.res).toHaveSessionCookie();
      expect(ok.res.headers.getSetCookie().filter((c) => KEPT.test(c))).toEqual([]);
      const json = await signIn(new CookieJar(), typed, "wrong password", { json: "true" });
      expect(await json.res.json()).toEqual({ url: expect.stringContaining("error=CredentialsSignin") });
      expect(json.res.headers.getSetCookie().filter((c) => KEPT.test(c))).toEqual([]);
    });

    it("keeps at most 254 UTF-16 units, cut between characters, and never a lone surrogate", async () => {
      for (const [sent, shown] of [
        ["a".repeat(253) + "😀", "a".repeat(253)],
        ["a".repeat(252) + "😀", "a".repeat(252) + "😀"],
        ["ada\ud800@example.com", "ada\ufffd@example.com"],
      ] as const) {
        const jar = new CookieJar();
        const csrfToken = await fetchCsrf(jar);
        const res = await callRoute(callbackRoute.action, post("/auth/callback/credentials", { csrfToken, email: sent, password: "wrong" }, { jar, json: true }), {
          provider: "credentials",
        });
        expect(res).toHaveErrorRedirect("CredentialsSignin");
        jar.apply(res);
        const page = await callRoute(signinRoute.loader, get("/auth/signin?error=CredentialsSignin&code=credentials", { jar }));
        expect((await page.json()).email).toBe(shown);
      }
    });

    it("is ignored, and cleared, on a page that is not a refused password, or when it is too long", async () => {
      const plain = await callRoute(signinRoute.loader, get("/auth/signin", { jar: new CookieJar({ "authjs.signin-email": "ada%40example.com" }) }));
      expect((await plain.json()).email).toBe("");
      expect(plain.headers.getSetCookie().filter((c) => KEPT.test(c))).toEqual([expect.stringMatching(/Max-Age=0/)]);
      const long = `${"a".repeat(250)}%40example.com`;
      const tooLong = await callRoute(signinRoute.loader, get("/auth/signin?error=CredentialsSignin", { jar: new CookieJar({ "authjs.signin-email": long }) }));
      expect((await tooLong.json()).email).toBe("");
    });
  });

  it("gives the forms a CSRF token, the validated callback URL and the error message", async () => {
    const res = await callRoute(signinRoute.loader, get("/auth/signin?callbackUrl=/account&error=CredentialsSignin"));
    const data = await res.json();
    expect(data.csrfToken).toMatch(/^[0-9a-f]{64}$/);
    expect(data.callbackUrl).toBe("/account");
    expect(data.error).toEqual({ code: "CredentialsSignin", message: "Sign in failed. Check the details you provided are correct." });
    expect(data.providers.map((p: { id: string }) => p.id)).toContain("credentials");
    const names = res.headers.getSetCookie().map((c) => c.split("=")[0]);
    expect(names).toEqual(["authjs.csrf-token", "authjs.callback-url"]);
  });

  it("shows a generic message for an unknown code and never echoes a hostile callback URL", async () => {
    const data = await (await callRoute(signinRoute.loader, get("/auth/signin?callbackUrl=javascript:alert(1)&error=<b>x</b>"))).json();
    expect(data.callbackUrl).toBe("/");
    expect(data.error.message).toBe("Unable to sign in.");
  });

  it("POST /auth/signin without a provider checks CSRF and returns to the page", async () => {
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    expect(await callRoute(signinRoute.action, post("/auth/signin", { csrfToken }, { jar }))).toHaveRedirect("/auth/signin");
    expect(await callRoute(signinRoute.action, post("/auth/signin", {}, { jar }))).toHaveErrorRedirect("MissingCSRF");
  });
});

describe("the sign-in page's second step", () => {
  it("'Forgot your password?' belongs to the password form: no 'or' between them, one 'or' before the e-mail link, in en/ar", async () => {
    undoEnv = withEnv({ AUTH_EMAIL_SERVER: "smtp://127.0.0.1:2525", AUTH_EMAIL_FROM: "Vestibule <no-reply@example.com>", AUTH_PASSWORDS: "true" });
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    jar.apply(await callRoute(signinRoute.action, post("/auth/signin", { csrfToken, email: "ada@example.com" }, { jar })));
    const data = await (await callRoute(signinRoute.loader, get("/auth/signin?step=methods", { jar }))).json();
    expect(data.step).toBe("methods");
    for (const locale of ["en", "ar"] as const) {
      const html = renderPage(signinRoute, "/auth/signin?step=methods", locale, { loaderData: data });
      const between = html.slice(html.indexOf('id="credentials-form"'), html.indexOf('id="forgot-password-start"'));
      expect(between).not.toContain('class="divider"');
      expect(html.match(/class="divider"/g)).toHaveLength(1);
    }
  });
});

describe("the sign-in page for a visitor who is signed in", () => {
  it("Back to a page of a failed attempt after the sign-in finished shows one state — signed in, with Continue — and no error, in en/fr/de/ar", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar());
    const path = "/auth/signin?error=CredentialsSignin&code=credentials";
    const data = await (await callRoute(signinRoute.loader, get(path, { jar }))).json();
    expect(data).toMatchObject({ signedInAs: "ada@example.com", error: null });
    for (const locale of LOCALES) {
      const html = renderPage(signinRoute, path, locale, { loaderData: data });
      expect(textOf(html)).toContain(runWithLocale(locale, () => t("signin.signedInAs", { address: "ada@example.com" })));
      expect(html).not.toContain('role="alert"');
      // In every language the address is isolated left to right (<bdi dir="ltr">), so in a
      // right-to-left page its full stop stays after it (ADR 161).
      // A short address is one word, moving whole to the next line rather than breaking.
      expect(html).toContain(`<bdi dir="ltr" class="ltr">ada@example.com</bdi>`);
    }
    // Signed out, the same address shows the refusal as before.
    expect((await (await callRoute(signinRoute.loader, get(path))).json()).error).toMatchObject({ code: "CredentialsSignin" });
  });
});

describe("sign-out page", () => {
  it("asks for confirmation with a CSRF token and an explicit callback URL only", async () => {
    const data = await (await callRoute(signoutRoute.loader, get("/auth/signout?callbackUrl=/bye"))).json();
    expect(data).toMatchObject({ callbackUrl: "/bye", signedIn: false });
    expect(data.csrfToken).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a signed-in visitor can change their mind: 'Stay signed in and go back' leads to the page they came from, else their account, in en/fr/de/ar", async () => {
    await createUser();
    const { jar } = await signIn(new CookieJar());
    const fromAccount = await (await callRoute(signoutRoute.loader, get("/auth/signout", { jar, headers: { Referer: "http://localhost:3000/account#sessions" } }))).json();
    expect(fromAccount).toMatchObject({ signedIn: true, cancelUrl: "/account#sessions" });
    const typed = await (await callRoute(signoutRoute.loader, get("/auth/signout", { jar }))).json();
    expect(typed.cancelUrl).toBe("/account");
    const elsewhere = await (await callRoute(signoutRoute.loader, get("/auth/signout", { jar, headers: { Referer: "https://evil.example/x" } }))).json();
    expect(elsewhere.cancelUrl).toBe("/account");
    for (const locale of LOCALES) {
      const html = renderPage(signoutRoute, "/auth/signout", locale, { loaderData: fromAccount });
      expect(html).toMatch(new RegExp(`<a href="/account#sessions" id="signout-cancel">${runWithLocale(locale, () => t("signout.cancel"))}</a>`));
      expect(textOf(html)).toContain(runWithLocale(locale, () => t("signout.question")));
    }
  });

  it("a visitor who is not signed in is told so, with a way to sign in, not asked to confirm a sign-out", async () => {
    const data = await (await callRoute(signoutRoute.loader, get("/auth/signout"))).json();
    for (const locale of LOCALES) {
      const text = textOf(renderPage(signoutRoute, "/auth/signout", locale, { loaderData: data }));
      expect(text).toContain(runWithLocale(locale, () => t("signout.notSignedIn")));
      expect(text).not.toContain(runWithLocale(locale, () => t("signout.question")));
    }
  });
});

describe("error page", () => {
  it.each([
    ["Configuration", 500],
    ["ServiceUnavailable", 503],
    ["AccessDenied", 403],
    ["Verification", 403],
    ["Whatever", 200],
  ])("%s → %i", async (code, status) => {
    const res = await callRoute(errorRoute.loader, get(`/auth/error?error=${code}`));
    expect(res.status).toBe(status);
    const body = await res.text();
    expect(body).not.toMatch(/stack|at \w+ \(/i);
    // Only the outage's page says when to ask again.
    expect(res.headers.get("Retry-After")).toBe(status === 503 ? "5" : null);
  });

  it("AccessDenied for a signed-in visitor says it in those terms and offers the account, not 'sign in'", async () => {
    await createUser();
    const { jar } = await signIn();
    const page = (await (await callRoute(errorRoute.loader, get("/auth/error?error=AccessDenied", { jar }))).json()) as { heading: string; message: string; next: { href: string } | null };
    expect(page.heading).toBe("That was not allowed");
    expect(page.message).toMatch(/You are signed in/);
    expect(page.next?.href).toBe("/account");
    const signedOut = (await (await callRoute(errorRoute.loader, get("/auth/error?error=AccessDenied"))).json()) as { next: unknown; message: string };
    expect(signedOut.next).toBeNull();
    expect(signedOut.message).not.toMatch(/You are signed in/);
  });
});

describe("pages that need a session", () => {
  it("send a signed-out visitor to sign in with SessionRequired and the page as callbackUrl", async () => {
    for (const [route, path] of [[accountRoute.loader, "/account"], [welcomeRoute.loader, "/welcome?callbackUrl=/x"]] as const) {
      const res = await callRoute(route, get(path));
      expect(res).toHaveRedirect(`/auth/signin?error=SessionRequired&callbackUrl=${encodeURIComponent(path)}`);
    }
  });

  it("/welcome continues to the validated callback URL", async () => {
    await createUser();
    const { jar } = await signIn();
    expect((await (await callRoute(welcomeRoute.loader, get("/welcome?callbackUrl=/account", { jar }))).json()).next).toBe("/account");
    expect((await (await callRoute(welcomeRoute.loader, get("/welcome?callbackUrl=https://evil.example", { jar }))).json()).next).toBe("/");
  });

  it("the home page shows the session", async () => {
    await createUser();
    const { jar } = await signIn();
    const data = await (await callRoute(homeRoute.loader, get("/", { jar }))).json();
    expect(data.session.user.email).toBe("ada@example.com");
  });
});

describe("/account", () => {
  it("shows the profile and changes the name through the session update", async () => {
    await createUser();
    const { jar } = await signIn();
    const page = await callRoute(accountRoute.loader, get("/account", { jar }));
    const data = await page.json();
    expect(data.profile).toMatchObject({ email: "ada@example.com", name: "Ada" });
    expect(data.hasPassword).toBe(true);
    const res = await callRoute(accountRoute.action, post("/account", { csrfToken: data.csrfToken, intent: "update-profile", name: "Ada L." }, { jar }));
    expect(res).toHaveRedirect("/account?updated=profile#profile-notice");
    expect(res).toHaveSessionCookie();
    jar.apply(res);
    expect((await (await callRoute(accountRoute.loader, get("/account?updated=profile", { jar }))).json()).notice).toBe("Your profile was saved.");
  });

  it("refuses a missing CSRF token and an empty name with messages, changing nothing", async () => {
    await createUser();
    const { jar } = await signIn();
    const { csrfToken } = await (await callRoute(accountRoute.loader, get("/account", { jar }))).json();
    const noCsrf = await callRoute(accountRoute.action, post("/account", { intent: "update-profile", name: "X" }, { jar }));
    expect(noCsrf.status).toBe(403);
    const empty = await callRoute(accountRoute.action, post("/account", { csrfToken, intent: "update-profile", name: "   " }, { jar }));
    expect(empty).toHaveRedirect("/account?refused=nameEmpty&intent=update-profile#profile-notice");
    expect((await accountRefusal(empty, jar)).fieldErrors).toEqual({ name: "Name cannot be empty." });
    const unknown = await callRoute(accountRoute.action, post("/account", { csrfToken, intent: "drop-tables" }, { jar }));
    expect(unknown.status).toBe(400);
    expect((await testDb().user.findFirstOrThrow()).name).toBe("Ada");
  });

  it("lists database sessions and signs out one device or every device", async () => {
    undoEnv = withEnv({ AUTH_SESSION_STRATEGY: "database" });
    await createUser();
    const laptop = (await signIn(new CookieJar())).jar;
    const phone = (await signIn(new CookieJar())).jar;
    const data = await (await callRoute(accountRoute.loader, get("/account", { jar: laptop }))).json();
    expect(data.sessions).toHaveLength(2);
    const other = data.sessions.find((s: { current: boolean }) => !s.current);
    const res = await callRoute(accountRoute.action, post("/account", { csrfToken: data.csrfToken, intent: "revoke-session", sessionId: other.id }, { jar: laptop }));
    expect(res).toHaveRedirect("/account?updated=session#devices-notice");
    expect(await testDb().session.count()).toBe(1);
    expect(await callRoute(accountRoute.loader, get("/account", { jar: phone }))).toHaveRedirect();

    // Another user's session id cannot be revoked: refused, and that session keeps working.
    await createUser("grace@example.com", "Grace");
    const grace = (await signIn(new CookieJar(), "grace@example.com")).jar;
    const graceSessions = (await (await callRoute(accountRoute.loader, get("/account", { jar: grace }))).json()).sessions;
    expect(graceSessions).toHaveLength(1);
    const { csrfToken: laptopCsrf } = await (await callRoute(accountRoute.loader, get("/account", { jar: laptop }))).json();
    const foreign = await callRoute(accountRoute.action, post("/account", { csrfToken: laptopCsrf, intent: "revoke-session", sessionId: graceSessions[0].id }, { jar: laptop }));
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).formError).toBe("That session no longer exists.");
    const graceSession = await (await callRoute(sessionRoute.loader, get("/auth/session", { jar: grace }))).json();
    expect(graceSession?.user).toMatchObject({ email: "grace@example.com", name: "Grace" });

    const again = (await signIn(new CookieJar())).jar;
    const { csrfToken } = await (await callRoute(accountRoute.loader, get("/account", { jar: laptop }))).json();
    const all = await callRoute(accountRoute.action, post("/account", { csrfToken, intent: "revoke-all" }, { jar: laptop }));
    expect(all).toHaveRedirect("/auth/signin?notice=SignedOutEverywhere");
    expect(await callRoute(accountRoute.loader, get("/account", { jar: again }))).toHaveRedirect();
    // "Everywhere" means every one of this user's devices, never another user's.
    expect(await testDb().session.count()).toBe(1);
    expect((await (await callRoute(sessionRoute.loader, get("/auth/session", { jar: grace }))).json())?.user.email).toBe("grace@example.com");
    expect(await testDb().authEvent.count({ where: { type: "session-revoked" } })).toBe(2);
  });
});

describe("POST /auth/_log", () => {
  it("writes one structured line for a valid event and answers 200 with an empty body", async () => {
    const lines: string[] = [];
    // Every level goes to stdout.
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(logRoute.action, post("/auth/_log", { csrfToken, level: "error", code: "CLIENT_FETCH_ERROR", message: "boom", metadata: '{"url":"/auth/session"}' }, { jar }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    const entry = JSON.parse(lines.find((l) => l.includes("client-log"))!);
    expect(entry).toMatchObject({ level: "error", event: "client-log", code: "CLIENT_FETCH_ERROR", message: "boom", metadata: { url: "/auth/session" } });
  });

  it("403 without CSRF, 400 for a bad level, 413 over 4 KiB, 400 for GET", async () => {
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    expect((await callRoute(logRoute.action, post("/auth/_log", { level: "error", code: "X" }, { jar }))).status).toBe(403);
    expect((await callRoute(logRoute.action, post("/auth/_log", { csrfToken, level: "fatal", code: "X" }, { jar }))).status).toBe(400);
    expect((await callRoute(logRoute.action, post("/auth/_log", { csrfToken, level: "warn", code: "X", message: "m".repeat(5000) }, { jar }))).status).toBe(413);
    expect((await callRoute(logRoute.loader, get("/auth/_log"))).status).toBe(400);
  });

  it("is rate-limited per client", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    const send = () => callRoute(logRoute.action, post("/auth/_log", { csrfToken, level: "debug", code: "X" }, { jar, headers: { "X-Vestibule-Remote-Addr": "10.0.0.7" } }));
    for (let i = 0; i < 60; i++) expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(429);
  });
});
