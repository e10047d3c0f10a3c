// The sign-in page asks for the address once (ADR 087), walked through React
// Router's own pipeline as a browser without JavaScript walks it: step one POSTs the address to
// /auth/signin, which answers with the second step's URL and keeps the address in a short-lived
// cookie (never in the URL); the second step offers the same ways for every address, known or
// not, and the old direct POSTs keep working beside it.
import { beforeEach, describe, expect, it } from "vitest";
import * as signinRoute from "../../../app/routes/auth/signin";
import { createUser, PASSWORD, signIn } from "../../support/auth";
import { dbLabel, resetDatabase } from "../../support/db";
import { callRoute, CookieJar, fetchCsrf, get, ORIGIN, post } from "../../support/http";
import { envPerTest, useAppHandler } from "../../support/per-test";

const handle = useAppHandler();
const setEnv = envPerTest();
beforeEach(async () => {
  await resetDatabase();
});

const KEPT = "authjs.signin-email";

/** One request through the whole app with the jar's cookies; the answer's cookies go into the jar. */
async function visit(jar: CookieJar, path: string, form?: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await handle(
    new Request(ORIGIN + path, {
      method: form ? "POST" : "GET",
      headers: { Cookie: jar.header(), Origin: ORIGIN, ...(form ? { "Content-Type": "application/x-www-form-urlencoded" } : {}), ...headers },
      body: form ? new URLSearchParams(form) : undefined,
    }),
  );
  jar.apply(res);
  return res;
}

async function csrf(jar: CookieJar): Promise<string> {
  return (await (await visit(jar, "/auth/csrf")).json()).csrfToken;
}

const cookieNames = (res: Response) => res.headers.getSetCookie().map((c) => c.split("=")[0]).sort();

/** A page's HTML without what differs between any two visits: nonces, CSRF tokens, and `address`. */
function comparable(html: string, address: string): string {
  return html
    .replaceAll(/nonce="[^"]*"/g, 'nonce=""')
    .replaceAll(/[0-9a-f]{64}/g, "<csrf>")
    .replaceAll(address, "<address>");
}

describe(`identifier-first sign-in (${dbLabel})`, () => {
  it("a visitor without JavaScript posts the address and lands on step two; the address rides in a cookie, never in the URL", async () => {
    const jar = new CookieJar();
    const csrfToken = await csrf(jar);
    const res = await visit(jar, "/auth/signin", { csrfToken, callbackUrl: "/account", email: "Ada@Example.com" });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe(`${ORIGIN}/auth/signin?step=methods&callbackUrl=%2Faccount`);
    expect(res.headers.getSetCookie().filter((c) => c.startsWith(`${KEPT}=`))).toEqual([
      `${KEPT}=Ada%40Example.com; Max-Age=600; Path=/; HttpOnly; SameSite=Lax`,
    ]);

    // Step two shows it read-only with "change", a password field and the e-mail link; a reload
    // shows it again (the cookie stays for its ten minutes).
    for (let visitNo = 0; visitNo < 2; visitNo++) {
      const page = await visit(jar, "/auth/signin?step=methods&callbackUrl=%2Faccount");
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toMatch(/<input[^>]*id="signin-address"[^>]*>/);
      const addressInput = /<input[^>]*id="signin-address"[^>]*>/.exec(html)![0];
      // As typed, as the page with JavaScript keeps it.
      expect(addressInput).toContain('value="Ada@Example.com"');
      expect(addressInput).toMatch(/autocomplete="username"/i);
      expect(addressInput).toMatch(/readonly=""/i);
      expect(html).toMatch(/<input[^>]*autocomplete="current-password"/i);
      expect(html).toContain('id="signin-change"');
      expect(html).toContain('href="/auth/signin?step=address&amp;callbackUrl=%2Faccount"');
      expect(html).not.toContain('id="address-form"');
      expect(page.headers.getSetCookie().filter((c) => c.startsWith(`${KEPT}=`))).toEqual([]);
    }

    // "Change" without JavaScript: step one again, the address in its field.
    const change = await (await visit(jar, "/auth/signin?step=address&callbackUrl=%2Faccount")).text();
    expect(change).toMatch(/<input[^>]*id="input-address"[^>]*value="Ada@Example.com"/);
    expect(change).not.toContain('id="credentials-form"');
  });

  it("step one is one address field (username and, with passkeys, webauthn autofill) with the OAuth buttons below; no password on it", async () => {
    setEnv({ AUTH_PASSKEYS: "true" });
    const html = await (await visit(new CookieJar(), "/auth/signin")).text();
    expect([...html.matchAll(/<input[^>]*type="email"[^>]*>/g)]).toHaveLength(1);
    expect(html).toMatch(/<input[^>]*id="input-address"[^>]*autocomplete="username webauthn"/i);
    expect(html).not.toMatch(/type="password"/);
    expect(html).toMatch(/<form(?=[^>]*method="post")(?=[^>]*action="\/auth\/signin")[^>]*id="address-form"/);
  });

  it("the JSON client gets the second step's URL as {url}, with the same cookie", async () => {
    const jar = new CookieJar();
    const csrfToken = await fetchCsrf(jar);
    const res = await callRoute(signinRoute.action, post("/auth/signin", { csrfToken, email: "ada@example.com", json: "true" }, { jar }));
    expect(res.status).toBe(200);
    // With the domain's enterprise connections (none here; tests/integration/organizations/address-step.test.ts).
    expect(await res.json()).toEqual({ url: `${ORIGIN}/auth/signin?step=methods&callbackUrl=%2F`, connections: [] });
    expect(cookieNames(res)).toContain(KEPT);
  });

  it("an attacker's POST without the CSRF token sets nothing; a malformed address goes back to step one, as typed, with the message", async () => {
    const jar = new CookieJar();
    const noCsrf = await callRoute(signinRoute.action, post("/auth/signin", { email: "ada@example.com" }, { jar }));
    expect(noCsrf).toHaveErrorRedirect("MissingCSRF");
    expect(cookieNames(noCsrf)).not.toContain(KEPT);

    const csrfToken = await csrf(jar);
    // Another site's page posting the visitor's own token (a cross-site form): refused the same way.
    const foreign = await visit(jar, "/auth/signin", { csrfToken, email: "ada@example.com" }, { Origin: "https://evil.example" });
    expect(foreign).toHaveErrorRedirect("MissingCSRF");
    expect(jar.get(KEPT)).toBeUndefined();

    const bad = await visit(jar, "/auth/signin", { csrfToken, email: "ada@example" });
    expect(bad.headers.get("Location")).toBe(`${ORIGIN}/auth/signin?error=EmailInvalid&callbackUrl=%2F`);
    const page = await visit(jar, "/auth/signin?error=EmailInvalid&callbackUrl=%2F");
    const html = await page.text();
    expect(html).toMatch(/<input[^>]*id="input-address"[^>]*aria-invalid="true"[^>]*value="ada@example"/);
    expect(html).toContain('data-error-for="email"');
    expect(jar.get(KEPT)).toBeUndefined();
  });

  it.each(["jwt", "database"])("a refused password on step two comes back to step two with the address; the right one signs in and clears the cookie (%s sessions)", async (strategy) => {
    setEnv({ AUTH_SESSION_STRATEGY: strategy });
    await createUser();
    const jar = new CookieJar();
    const csrfToken = await csrf(jar);
    await visit(jar, "/auth/signin", { csrfToken, email: "ada@example.com" });
    const wrong = await visit(jar, "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: "wrong password" });
    expect(wrong).toHaveErrorRedirect("CredentialsSignin");
    const refused = await (await visit(jar, "/auth/signin?error=CredentialsSignin&code=credentials")).text();
    expect(refused).toMatch(/<input[^>]*id="signin-address"[^>]*value="ada@example.com"/);
    expect(refused).toContain('id="credentials-error"');

    await visit(jar, "/auth/signin", { csrfToken, email: "ada@example.com" });
    expect(jar.get(KEPT)).toBeDefined();
    const ok = await visit(jar, "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: PASSWORD });
    expect(ok).toHaveSessionCookie();
    expect(jar.get(KEPT)).toBeUndefined();
  });

  it("a rate-limited e-mail from step two keeps step two and the address", async () => {
    const jar = new CookieJar();
    const csrfToken = await csrf(jar);
    await visit(jar, "/auth/signin", { csrfToken, email: "ada@example.com" });
    const html = await (await visit(jar, "/auth/signin?error=RateLimited&minutes=15")).text();
    expect(html).toMatch(/<input[^>]*id="signin-address"[^>]*value="ada@example.com"/);
    expect(html).toContain("Too many attempts. Try again in 15 minutes.");
  });

  it("with JavaScript (no step cookie), a refused e-mail request or password still comes back to step two with the address as typed", async () => {
    setEnv({ AUTH_RATE_LIMIT_EMAIL_ADDRESS: "1/3600", AUTH_RATE_LIMIT_CREDENTIALS_ACCOUNT_CLIENT: "1/3600" });
    const jar = new CookieJar();
    const csrfToken = await csrf(jar);
    expect(await visit(jar, "/auth/signin/email", { csrfToken, email: "Ada@Example.com" })).toHaveRedirect("/auth/verify-request?provider=email&type=email");
    const limited = await visit(jar, "/auth/signin/email", { csrfToken, email: "Ada@Example.com" });
    expect(limited).toHaveErrorRedirect("RateLimited");
    expect(limited.headers.get("Location")).not.toMatch(/ada/i);
    const page = await (await visit(jar, limited.headers.get("Location")!.replace(ORIGIN, ""))).text();
    expect(page).toMatch(/<input[^>]*id="signin-address"[^>]*value="Ada@Example.com"/);
    // The address's budget of e-mails was spent (ADR 111): the page says so, not "too many attempts".
    expect(page).toMatch(/We have sent several e-mails to this address recently\. Check your inbox, or try again in \d+ minutes?\./);

    await createUser();
    const first = await visit(jar, "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: "wrong password" });
    expect(first).toHaveErrorRedirect("CredentialsSignin");
    const second = await visit(jar, "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: "wrong password" });
    expect(second).toHaveErrorRedirect("RateLimited");
    expect(jar.get(KEPT)).toBe("ada%40example.com");
  });

  it("a visitor without JavaScript who mistypes the password can reload the refusal, or go Back, and still finds the address on step two", async () => {
    await createUser();
    const jar = new CookieJar();
    const csrfToken = await csrf(jar);
    await visit(jar, "/auth/signin", { csrfToken, callbackUrl: "/account", email: "Ada@Example.com" });
    const refused = await visit(jar, "/auth/callback/credentials", { csrfToken, email: "Ada@Example.com", password: "wrong password" });
    expect(refused).toHaveErrorRedirect("CredentialsSignin");
    const refusal = refused.headers.get("Location")!.replace(ORIGIN, "");
    for (const path of [refusal, refusal, "/auth/signin?step=methods&callbackUrl=%2Faccount"]) {
      const html = await (await visit(jar, path)).text();
      expect(html).toMatch(/<input[^>]*id="signin-address"[^>]*value="Ada@Example.com"/);
    }
    // Kept no longer than step two keeps it; the right password forgets it at once.
    expect(refused.headers.getSetCookie().find((c) => c.startsWith(`${KEPT}=`))).toContain("Max-Age=60;");
    const signedIn = await visit(jar, "/auth/callback/credentials", { csrfToken, email: "Ada@Example.com", password: PASSWORD });
    expect(signedIn).toHaveSessionCookie();
    expect(jar.get(KEPT)).toBeUndefined();
  });

  it("an attacker learns nothing from step one or step two: known and unknown addresses get the same status, Location, cookie names and page", async () => {
    await createUser("known@example.com", "Known");
    const answers = [];
    for (const address of ["known@example.com", "other@example.com"]) {
      const jar = new CookieJar();
      const csrfToken = await csrf(jar);
      const step1 = await visit(jar, "/auth/signin", { csrfToken, callbackUrl: "/account", email: address });
      const step2 = await visit(jar, "/auth/signin?step=methods&callbackUrl=%2Faccount");
      answers.push({
        step1: { status: step1.status, location: step1.headers.get("Location"), cookies: cookieNames(step1), body: await step1.text() },
        step2: { status: step2.status, cookies: cookieNames(step2), html: comparable(await step2.text(), address) },
      });
    }
    expect(answers[0]!.step2.html).toContain('value="<address>"');
    expect(answers[0]).toEqual(answers[1]);
  });

  it("the old direct POSTs keep working without the first step", async () => {
    await createUser();
    const { res } = await signIn(new CookieJar(), "ada@example.com", PASSWORD);
    expect(res).toHaveSessionCookie();
    const json = await signIn(new CookieJar(), "ada@example.com", PASSWORD, { json: "true" });
    expect(await json.res.json()).toEqual({ url: `${ORIGIN}/` });
  });

  it("a plain visit to the page starts afresh and forgets the address", async () => {
    const jar = new CookieJar();
    const csrfToken = await csrf(jar);
    await visit(jar, "/auth/signin", { csrfToken, email: "ada@example.com" });
    const html = await (await visit(jar, "/auth/signin")).text();
    expect(html).toMatch(/<input[^>]*id="input-address"[^>]*value=""/);
    expect(jar.get(KEPT)).toBeUndefined();
    // Step two without the cookie is step one.
    expect(await (await visit(jar, "/auth/signin?step=methods")).text()).toContain('id="address-form"');
  });

  it("an attacker who plants the step cookie (a sibling subdomain, plain http) cannot put words or a reversed address into step two", async () => {
    for (const planted of ["Your account is locked: call +1 555 0100", "ada@example.com\u202Emoc.live@", '"><b>x</b>', "x".repeat(200)]) {
      const jar = new CookieJar({ [KEPT]: encodeURIComponent(planted) });
      const res = await visit(jar, "/auth/signin?step=methods&callbackUrl=%2Faccount");
      expect(res.status).toBe(200);
      const html = await res.text();
      // Step one, empty, and the planted cookie cleared: step two shows only a well-formed address.
      expect(html).not.toContain('id="signin-address"');
      expect(html).toMatch(/<input[^>]*id="input-address"[^>]*value=""/);
      expect(html).not.toContain(planted.slice(0, 20));
      expect(jar.get(KEPT)).toBeUndefined();
    }
    // A refused password's copy leads to step two only when it is an address, too (step one's
    // editable field may show what was typed, as after a malformed address).
    for (const query of ["error=CredentialsSignin", "error=CredentialsSignin&email=call%20us%20now"]) {
      const jar = new CookieJar({ [KEPT]: encodeURIComponent("Your account is locked: call +1 555 0100") });
      const html = await (await visit(jar, `/auth/signin?${query}`)).text();
      expect(html).not.toContain('id="signin-address"');
    }
  });

  it("an attacker's link with ?email= cannot swap another address into step two, even right after a refused password", async () => {
    await createUser();
    const jar = new CookieJar();
    const csrfToken = await csrf(jar);
    await visit(jar, "/auth/signin", { csrfToken, email: "ada@example.com" });
    await visit(jar, "/auth/callback/credentials", { csrfToken, email: "ada@example.com", password: "wrong password" });
    for (const path of ["/auth/signin?error=CredentialsSignin&email=mallory%40evil.example", "/auth/signin?step=methods&email=mallory%40evil.example"]) {
      const html = await (await visit(jar, path)).text();
      expect(html).toMatch(/<input[^>]*id="signin-address"[^>]*value="ada@example.com"/);
      // (The language menu's returnTo names the page's own URL, escaped; no field holds the address.)
      expect(html).not.toMatch(/value="mallory/);
    }
    expect(decodeURIComponent(jar.get(KEPT) ?? "")).toBe("ada@example.com");
  });

  it("step two is in the visitor's language, German and Arabic alike", async () => {
    for (const [lang, change, dir] of [["de", "Ändern", "ltr"], ["ar", "تغيير", "rtl"]] as const) {
      const jar = new CookieJar({ lang });
      const csrfToken = await csrf(jar);
      await visit(jar, "/auth/signin", { csrfToken, email: "ada@example.com" });
      const html = await (await visit(jar, "/auth/signin?step=methods")).text();
      expect(html).toContain(`<html lang="${lang}" dir="${dir}">`);
      expect(html).toMatch(new RegExp(`id="signin-change"[^>]*>${change}</a>`));
    }
  });
});
