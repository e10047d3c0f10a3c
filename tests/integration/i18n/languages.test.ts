// Through React Router's own pipeline (tests/support/app-handler.ts): which
// language a visitor gets (the lang cookie, then Accept-Language by quality, then English), the
// menu's form round trip, <html lang dir>, Vary, bad input, and e-mail in the requester's language.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { appHandler } from "../../support/app-handler";
import { notifySecurityChange } from "../../../app/auth/accounts/security-notices.server";
import { deleteAccount } from "../../../app/auth/accounts/deletion.server";
import { authRequest } from "../../../app/auth/core/request.server";
import { accountDeletedHooks } from "../../../app/auth/signin/registry.server";
import { runWithLocale, t } from "../../../app/i18n/t.server";
import { DEMO_USER, machineLocale, seedDemoUser } from "../../../app/dev/bootstrap.server";
import { mailSenderIdle } from "../../../app/mail/queue.server";
import { createUser, PASSWORD, signIn } from "../../support/auth";
import { dbLabel, resetDatabase, testDb } from "../../support/db";
import { CookieJar, get, ORIGIN } from "../../support/http";
import { linkIn, startSmtpSink, type SmtpSink } from "../../support/smtp-sink";
import { configure, smtpEnv } from "../email/helpers";

let handle: (request: Request) => Promise<Response>;
let smtp: SmtpSink;
beforeAll(async () => {
  handle = await appHandler();
  smtp = await startSmtpSink();
});
afterAll(async () => {
  await smtp.close();
});
afterEach(() => mailSenderIdle());
beforeEach(async () => {
  await resetDatabase();
  smtp.clear();
});

async function page(path: string, headers: Record<string, string> = {}) {
  const res = await handle(new Request(ORIGIN + path, { headers }));
  return { res, html: await res.text() };
}

function form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return handle(
    new Request(ORIGIN + path, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN, ...headers },
      body: new URLSearchParams(fields),
    }),
  );
}

const htmlTag = (html: string) => /<html[^>]*>/.exec(html)?.[0];

describe(`languages (${dbLabel})`, () => {
  it("a visitor who says nothing gets English, marked lang=en, and the answer varies on Accept-Language and Cookie", async () => {
    const { res, html } = await page("/auth/signin");
    expect(res.status).toBe(200);
    expect(htmlTag(html)).toBe('<html lang="en" dir="ltr">');
    expect(html).toContain("<h1 id=\"card-title\">Sign in</h1>");
    const vary = (res.headers.get("Vary") ?? "").split(",").map((v) => v.trim());
    expect(vary).toEqual(expect.arrayContaining(["Accept-Language", "Cookie"]));
  });

  it("Accept-Language picks the best supported language by its quality values", async () => {
    const de = await page("/", { "Accept-Language": "ja;q=1, fr;q=0.4, de-CH;q=0.9" });
    expect(htmlTag(de.html)).toBe('<html lang="de" dir="ltr">');
    expect(de.html).toContain("Sie sind nicht angemeldet.");
    const ar = await page("/auth/signin", { "Accept-Language": "ar-EG,ar;q=0.9,en;q=0.8" });
    expect(htmlTag(ar.html)).toBe('<html lang="ar" dir="rtl">');
    expect(ar.html).toContain("تسجيل الدخول");
  });

  it("the lang cookie beats Accept-Language", async () => {
    const { html } = await page("/", { Cookie: "lang=fr", "Accept-Language": "de" });
    expect(htmlTag(html)).toBe('<html lang="fr" dir="ltr">');
    expect(html).toContain("Vous n’êtes pas connecté.");
  });

  it.each([
    ["lang=<script>alert(1)</script>", "<script>alert(1)"],
    ["lang=en-US%22%3E%3Cscript%3E", '"><script>'],
    ["lang=toString", "lang=toString"],
    ["lang=__proto__", "__proto__"],
    ["lang=%ZZ", "%ZZ"],
  ])("a malformed cookie %s is English, never a 500, never reflected", async (cookie, hostile) => {
    const { res, html } = await page("/auth/signin", { Cookie: cookie, "Accept-Language": "x-" + "q".repeat(400) + ";q=oops, <b>" });
    expect(res.status).toBe(200);
    expect(htmlTag(html)).toBe('<html lang="en" dir="ltr">');
    expect(html).not.toContain(hostile);
  });

  it("the sign-in errors of section 7 are in the visitor's language; the code in the URL is not", async () => {
    const { html } = await page("/auth/signin?error=CredentialsSignin", { "Accept-Language": "de" });
    expect(html).toContain("Die Anmeldung ist fehlgeschlagen. Prüfen Sie, ob Ihre Angaben korrekt sind.");
    const limited = await page("/auth/signin?error=RateLimited&minutes=2", { "Accept-Language": "ar" });
    expect(limited.html).toContain("دقيقتين");
  });

  it("texts with markup and dates render in the language: the signed-in home page in French", async () => {
    await createUser();
    const jar = new CookieJar({ lang: "fr" });
    const csrf = await handle(new Request(`${ORIGIN}/auth/csrf`, { headers: { Cookie: jar.header() } }));
    jar.apply(csrf);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const signin = await form("/auth/callback/credentials", { email: "ada@example.com", password: PASSWORD, csrfToken }, { Cookie: jar.header() });
    expect(signin.status).toBe(302);
    jar.apply(signin);
    const { html } = await page("/", { Cookie: jar.header() });
    // The name and the address each isolated (<bdi>), so a name in another script keeps its place.
    expect(html).toContain('Connecté en tant que <strong><bdi>Ada</bdi></strong> (<bdi dir="ltr" class="ltr">ada@example.com</bdi>)<!-- -->.');
    // Without JavaScript the date is in UTC with the zone named, in French.
    expect(html).toMatch(/Votre session dure jusqu’au <time dateTime="[^"]+">[^<]*UTC<\/time>\./);
  });

  it("JSON answers do not change with the language", async () => {
    const en = await (await handle(new Request(`${ORIGIN}/auth/providers`))).text();
    const ar = await (await handle(new Request(`${ORIGIN}/auth/providers`, { headers: { "Accept-Language": "ar", Cookie: "lang=ar" } }))).text();
    expect(ar).toBe(en);
  });

  describe("the language menu", () => {
    it("is a plain form on every page, with the current page to come back to", async () => {
      const { html } = await page("/auth/signin?callbackUrl=%2Faccount", { "Accept-Language": "fr" });
      expect(html).toMatch(/<form [^>]*action="\/language" method="post">/);
      expect(html).toContain('name="returnTo" value="/auth/signin?callbackUrl=%2Faccount"');
      expect(html).toMatch(/<option value="de" lang="de">Deutsch<\/option>/);
      expect(html).toMatch(/<option value="fr" lang="fr" selected="">Français<\/option>/);
    });

    it("never offers a way back that another origin could read as its own (a //host path)", async () => {
      const res = await handle(new Request(`${ORIGIN}//other.example/auth/x`));
      const html = await res.text();
      expect(html).not.toContain("other.example");
      expect(html).toContain('name="returnTo" value="/"');
    });

    it("sets the cookie and goes back to the same URL, which then speaks the chosen language", async () => {
      const jar = new CookieJar();
      const res = await form("/language", { lang: "de", returnTo: "/auth/signin?callbackUrl=%2Faccount" });
      expect(res.status).toBe(303);
      expect(res.headers.get("Location")).toBe("/auth/signin?callbackUrl=%2Faccount");
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith("lang="));
      expect(cookie).toMatch(/^lang=de; Max-Age=31536000; Path=\/; HttpOnly; SameSite=Lax$/);
      jar.apply(res);
      const { html } = await page(res.headers.get("Location")!, { Cookie: jar.header(), "Accept-Language": "fr" });
      expect(htmlTag(html)).toBe('<html lang="de" dir="ltr">');
      expect(html).toContain("Mit Passwort anmelden");
    });

    it.each(["https://evil.example/", "//evil.example/", "/\\evil.example", "javascript:alert(1)", "/\t/evil.example"])(
      "never sends the browser to another site (returnTo %j goes home)",
      async (returnTo) => {
        const res = await form("/language", { lang: "fr", returnTo });
        expect(res.status).toBe(303);
        expect(res.headers.get("Location")).toBe("/");
      },
    );

    it.each(["xx", "", "<script>alert(1)</script>", "EN", "en-US", "__proto__"])("refuses an unknown language %j: 400, no cookie, not reflected", async (lang) => {
      const res = await form("/language", { lang, returnTo: "/" });
      expect(res.status).toBe(400);
      expect(res.headers.getSetCookie().some((c) => c.startsWith("lang="))).toBe(false);
      if (lang) expect(await res.text()).not.toContain(lang);
    });

    it("refuses a POST from another site (the app's origin check), so no site can switch a visitor's language", async () => {
      const res = await form("/language", { lang: "ar", returnTo: "/" }, { Origin: "https://evil.example" });
      expect(res.status).toBe(403);
      expect(res.headers.getSetCookie().some((c) => c.startsWith("lang="))).toBe(false);
    });
  });

  describe("e-mail", () => {
    it("a sign-in link is written in the language of the request that asked for it", async () => {
      configure(smtpEnv(smtp.url));
      const jar = new CookieJar({ lang: "fr" });
      const csrf = await handle(new Request(`${ORIGIN}/auth/csrf`, { headers: { Cookie: jar.header() } }));
      jar.apply(csrf);
      const { csrfToken } = (await csrf.json()) as { csrfToken: string };
      const res = await form("/auth/signin/email", { email: "ada@example.com", csrfToken }, { Cookie: jar.header() });
      expect(res.status).toBe(302);
      const [message] = await smtp.waitFor(1);
      expect(message!.subject).toBe("Connexion à Vestibule");
      expect(message!.text).toContain("Le lien fonctionne une seule fois et expire dans 24 heures.");
      expect(message!.html).toMatch(/<html lang="fr">/);
    });

    /** A sign-in link for `email` asked for from a browser speaking `language`; the message it sent. */
    async function askForLink(email: string, language: string) {
      smtp.clear();
      const jar = new CookieJar();
      const csrf = await handle(new Request(`${ORIGIN}/auth/csrf`, { headers: { "Accept-Language": language } }));
      jar.apply(csrf);
      const { csrfToken } = (await csrf.json()) as { csrfToken: string };
      expect((await form("/auth/signin/email", { email, csrfToken }, { Cookie: jar.header(), "Accept-Language": language })).status).toBe(302);
      return (await smtp.waitFor(1))[0]!;
    }

    async function forgotPassword(email: string, language: string) {
      smtp.clear();
      const jar = new CookieJar();
      const page = await handle(new Request(`${ORIGIN}/auth/forgot-password`, { headers: { "Accept-Language": language } }));
      jar.apply(page);
      const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(await page.text())![1]!;
      expect((await form("/auth/forgot-password", { email, csrfToken }, { Cookie: jar.header(), "Accept-Language": language })).status).toBeLessThan(400);
      return (await smtp.waitFor(1))[0]!;
    }

    /** A security notice of a change made from a browser speaking `language`. */
    async function noticeFrom(userId: string, language: "ar" | "en") {
      await mailSenderIdle();
      smtp.clear();
      await runWithLocale(language, () => notifySecurityChange(authRequest(get("/account")), userId, { kind: "password-changed" }));
      return (await smtp.waitFor(1))[0]!;
    }

    it("a thief's Arabic browser cannot choose the language of the owner's e-mails: the owner who signed up in German gets German alerts, sign-in links, resets and the deletion notice", async () => {
      configure({ ...smtpEnv(smtp.url), AUTH_PASSWORDS: "true" });
      // The owner signs up from a German browser (an e-mailed link that creates the account).
      const invite = await askForLink("owner@example.com", "de");
      const opened = await handle(new Request(linkIn(invite).href, { headers: { "Accept-Language": "de" } }));
      expect(opened.status).toBe(302);
      const owner = await testDb().user.findUniqueOrThrow({ where: { email: "owner@example.com" } });
      expect(owner.locale).toBe("de");
      await mailSenderIdle();

      expect((await noticeFrom(owner.id, "ar")).subject).toBe("Ihr Vestibule-Passwort wurde geändert");
      const link = await askForLink("owner@example.com", "ar");
      expect(link.subject).toBe("Bei Vestibule anmelden");
      expect(link.html).toMatch(/<html lang="de">/);
      await testDb().password.create({ data: { userId: owner.id, hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA" } });
      expect((await forgotPassword("owner@example.com", "ar")).subject).toBe("Wählen Sie ein neues Passwort für Vestibule");
      smtp.clear();
      await runWithLocale("ar", () => deleteAccount(owner.id, { source: "self" }, { hooks: accountDeletedHooks, ar: authRequest(get("/account")) }));
      const [deleted] = await smtp.waitFor(1);
      expect(deleted!.html).toMatch(/<html lang="de">/);
    });

    it("an account from before the language was kept gets its notices in English, whatever the requester's language; an unknown address gets a link in the request's language", async () => {
      configure(smtpEnv(smtp.url));
      const user = await createUser("old@example.com");
      expect((await noticeFrom(user.id, "ar")).subject).toBe("Your Vestibule password was changed");
      expect((await askForLink("nobody@example.com", "fr")).subject).toBe("Connexion à Vestibule");
    });

    it("the owner picking French in the menu just after signing in gets French e-mails; a copy of an old session cookie picking Arabic changes the page only", async () => {
      configure(smtpEnv(smtp.url));
      const user = await createUser("ada@example.com");
      const { jar } = await signIn(new CookieJar(), "ada@example.com");
      expect((await form("/language", { lang: "fr", returnTo: "/" }, { Cookie: jar.header() })).status).toBe(303);
      expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).locale).toBe("fr");
      expect((await noticeFrom(user.id, "en")).subject).toBe("Votre mot de passe Vestibule a été modifié");

      await testDb().session.updateMany({ where: { userId: user.id }, data: { authenticatedAt: new Date(Date.now() - 11 * 60_000) } });
      const thief = await form("/language", { lang: "ar", returnTo: "/" }, { Cookie: jar.header() });
      expect(thief.status).toBe(303);
      expect(thief.headers.getSetCookie().some((c) => c.startsWith("lang=ar"))).toBe(true);
      expect((await testDb().user.findUniqueOrThrow({ where: { id: user.id } })).locale).toBe("fr");
    });

    it("a German visitor's password reset e-mail is in German, an English one in English", async () => {
      configure({ ...smtpEnv(smtp.url), AUTH_PASSWORDS: "true" });
      await createUser();
      for (const [language, subject] of [
        ["de", "Wählen Sie ein neues Passwort für Vestibule"],
        ["en", "Choose a new Vestibule password"],
      ] as const) {
        smtp.clear();
        const jar = new CookieJar();
        const page = await handle(new Request(`${ORIGIN}/auth/forgot-password`, { headers: { "Accept-Language": language } }));
        jar.apply(page);
        const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(await page.text())?.[1];
        expect(csrfToken).toBeTruthy();
        const res = await form("/auth/forgot-password", { email: "ada@example.com", csrfToken: csrfToken! }, { Cookie: jar.header(), "Accept-Language": language });
        expect(res.status).toBeLessThan(400);
        const [message] = await smtp.waitFor(1);
        expect(message!.subject).toBe(subject);
      }
    });
  });

  describe("the demo user of the development start-up", () => {
    it("is seeded with the language of the developer's machine (or English), so its notices are in a language, not left to the default; a language already stored is kept", async () => {
      configure({ ...smtpEnv(smtp.url), AUTH_PASSWORDS: "true" });
      expect(machineLocale("ar-EG")).toBe("ar");
      expect(machineLocale("fr_FR.UTF-8")).toBe("fr");
      expect(machineLocale("en-US-u-va-posix")).toBe("en");
      expect(machineLocale("ja-JP")).toBe("en");
      await seedDemoUser("ar-EG");
      const demo = await testDb().user.findUniqueOrThrow({ where: { email: DEMO_USER.email } });
      expect(demo.locale).toBe("ar");
      smtp.clear();
      await runWithLocale("en", () => notifySecurityChange(authRequest(get("/account")), demo.id, { kind: "password-changed" }));
      const [message] = await smtp.waitFor(1);
      expect(message!.subject).toBe(runWithLocale("ar", () => t("notice.password-changed.subject", { site: "Vestibule" })));
      await seedDemoUser("de-DE");
      expect((await testDb().user.findUniqueOrThrow({ where: { email: DEMO_USER.email } })).locale).toBe("ar");
    });
  });
});
