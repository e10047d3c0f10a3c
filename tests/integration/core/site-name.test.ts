// AUTH_SITE_NAME (ADR 113): the site's name wherever the product names
// itself — page titles and headings, e-mail subjects, the passkey relying party name, the TOTP
// issuer, the password context words. One place reads the setting (config.server.ts).
import { describe, expect, it } from "vitest";
import { ConfigError, getConfig, loadConfig } from "../../../app/auth/core/config.server.ts";
import { authRequest } from "../../../app/auth/core/request.server.ts";
import { relyingParty } from "../../../app/auth/passkeys/relying-party.server.ts";
import { generateTotpSecret, otpauthUri } from "../../../app/auth/two-factor/totp.server.ts";
import { signInMessage } from "../../../app/mail/templates.server.ts";
import { dbLabel } from "../../support/db.ts";
import { CookieJar, get } from "../../support/http.ts";
import { envPerTest, useAppHandler } from "../../support/per-test.ts";
import { requestLink, useSmtpSink } from "../email/helpers.ts";

const handle = useAppHandler();

const setEnv = envPerTest();

describe(`AUTH_SITE_NAME="Acme Notes" (${dbLabel})`, () => {
  it("a visitor opening the sign-in page sees the site's name in the title and the header, not Vestibule", async () => {
    setEnv({ AUTH_SITE_NAME: "Acme Notes" });
    const res = await handle(get("/auth/signin"));
    const html = await res.text();
    expect(html).toMatch(/<title>[^<]* · Acme Notes<\/title>/);
    expect(html).not.toMatch(/<title>[^<]*Vestibule[^<]*<\/title>/);
    expect(html).toContain(">Acme Notes<");
  });

  it("a sign-in e-mail's subject, the TOTP otpauth URI's issuer and the passkey relying party name are the site's name", () => {
    setEnv({ AUTH_SITE_NAME: "Acme Notes" });
    const mail = signInMessage({ to: "ada@example.com", url: "http://localhost:3000/x", host: "localhost:3000", maxAgeSeconds: 600 });
    expect(mail.subject).toContain("Acme Notes");
    expect(mail.subject).not.toContain("Vestibule");
    const uri = new URL(otpauthUri(generateTotpSecret(), "ada@example.com"));
    expect(uri.searchParams.get("issuer")).toBe("Acme Notes");
    expect(decodeURIComponent(uri.pathname)).toContain("Acme Notes:");
    expect(relyingParty(authRequest(get("/auth/passkey/options"))).name).toBe("Acme Notes");
  });

  it("a visitor choosing a password that holds the site's name is refused it as a context word", () => {
    setEnv({ AUTH_SITE_NAME: "Acme Notes" });
    expect(getConfig().passwordContextWords).toContain("acme notes");
    expect(getConfig().passwordContextWords).not.toContain("vestibule");
    expect(getConfig().siteName).toBe("Acme Notes");
  });

  it("an operator's empty-looking or control-character AUTH_SITE_NAME stops the start naming it; unset, it is Vestibule", () => {
    expect(loadConfig({ ...process.env, AUTH_SITE_NAME: undefined }).siteName).toBe("Vestibule");
    for (const bad of ["   ", "Acme\nNotes", "x".repeat(101)]) {
      expect(() => loadConfig({ ...process.env, AUTH_SITE_NAME: bad }), JSON.stringify(bad)).toThrow(ConfigError);
      expect(() => loadConfig({ ...process.env, AUTH_SITE_NAME: bad }), JSON.stringify(bad)).toThrow(/AUTH_SITE_NAME/);
    }
  });
});

describe(`an e-mail of a site named "Acme Notes" (${dbLabel})`, () => {
  const smtp = useSmtpSink({ AUTH_SITE_NAME: "Acme Notes", AUTH_EMAIL_FROM: "no-reply@acme.test" });

  it("a visitor asking for a sign-in link gets it from Acme Notes, with the site's name in the subject, when AUTH_EMAIL_FROM gives no name", async () => {
    const res = await requestLink(new CookieJar(), { email: "ada@example.com" });
    expect(res.status).toBeLessThan(400);
    const [message] = await smtp.sink.waitFor(1);
    expect(message!.subject).toContain("Acme Notes");
    expect(message!.from).toMatch(/^"?Acme Notes"? <no-reply@acme\.test>$/);
  });
});
