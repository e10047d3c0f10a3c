// The look comes from one file (docs/features/look.md): app/theme.css declares every colour, the
// fonts and the logo as custom properties; the stylesheet and the components use the properties
// only; the e-mails take the site's name (AUTH_SITE_NAME), colour, fonts and logo from the same
// file. (tests/browser/theme.test.ts checks in Chromium that changing a property changes the page.)
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runWithLocale } from "../../app/i18n/t.server";
import { accountExistsMessage, changeEmailMessage, reauthCodeMessage, resetPasswordMessage, securityNoticeMessage, signInMessage, signUpMessage } from "../../app/mail/templates.server";
import { lightProperties, logoUrl, mailLook, mailLookOf, THEME_FILE } from "../../app/theme.server";
import { withEnv } from "../support/auth";

const root = path.resolve(import.meta.dirname, "../..");
const themeCss = readFileSync(path.join(root, THEME_FILE), "utf8");

function filesUnder(dir: string, pattern: RegExp): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile() && pattern.test(f.name))
    .map((f) => path.relative(root, path.join(f.parentPath, f.name)));
}

// A colour written as a value: #rgb, #rrggbb (with alpha too), or a colour function.
const RAW_COLOUR = /#(?:[0-9a-f]{8}|[0-9a-f]{6}|[0-9a-f]{3,4})(?![\w-])|\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(/i;
// A named colour as a CSS value (transparent and currentColor are no colour of their own).
const NAMED_COLOUR = /(?:color|background|border|fill|stroke|outline)[\w-]*\s*:\s*[^;{}]*\b(?:white|black|red|green|blue|gray|grey|silver|navy|orange|yellow|purple)\b/i;
// A font named anywhere but the theme (inherit and var(--font…) are the theme's).
const RAW_FONT = /font-family\s*:(?!\s*(?:var\(|inherit|\$\{))/i;

// Where a literal colour is the point, not the site's look.
const ALLOWED: Record<string, string> = {
  // A QR code is black on white whatever the theme, or a camera may not read it.
  "app/components/two-factor-section.tsx": "QR code",
  // The development stand-in for an identity provider: another site's page, not this one's.
  "app/dev/idp.server.ts": "dev identity provider",
};

describe("the theme file", () => {
  it("declares the colours, fonts and logo, in light and dark, and the logo is a file in public/", () => {
    const light = lightProperties(themeCss);
    for (const name of ["--bg", "--card", "--text", "--muted", "--border", "--brand", "--brand-text", "--danger", "--font", "--logo"]) expect(light[name], name).toBeTruthy();
    const dark = lightProperties(themeCss.slice(themeCss.indexOf("@media (prefers-color-scheme: dark)")).replace(/^@media[^{]*\{/, ""));
    expect(dark["--brand"]).toBeTruthy();
    expect(dark["--brand"]).not.toBe(light["--brand"]);
    expect(existsSync(path.join(root, "public", mailLook().logo))).toBe(true);
  });

  it("is imported once, by app.css, and nothing else in app/ writes a colour or a font", () => {
    const importers = filesUnder("app", /\.(css|tsx?)$/).filter((f) => /(?:@import|\bimport)\s[^;\n]*theme\.css/.test(readFileSync(path.join(root, f), "utf8").replace(/\/\/.*|\/\*[\s\S]*?\*\//g, "")));
    expect(importers).toEqual(["app/app.css"]);
    const appCss = readFileSync(path.join(root, "app/app.css"), "utf8");
    expect(appCss.match(/@import\s+"\.\/theme\.css"/g)).toHaveLength(1);
    const offenders: string[] = [];
    for (const file of filesUnder("app", /\.(css|tsx?)$/)) {
      if (file === THEME_FILE || file in ALLOWED || file.startsWith("app/i18n/")) continue;
      readFileSync(path.join(root, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          const code = line.replace(/^\s*(\/\/|\*|\/\*).*$/, "");
          if (RAW_COLOUR.test(code.replace(/(href|to|id)=["'{][^"'}]*/g, "")) || NAMED_COLOUR.test(code) || RAW_FONT.test(code)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it("the checks above catch a raw colour or font (they can fail)", () => {
    for (const line of ["a { color: #2f5bd3; }", "x { background: rgb(1 2 3) }", 'style="color:#fff"', "b { border: 1px solid white; }"]) expect(RAW_COLOUR.test(line) || NAMED_COLOUR.test(line), line).toBe(true);
    expect(RAW_FONT.test("p { font-family: Georgia, serif }")).toBe(true);
    expect(RAW_FONT.test("p { font-family: var(--font) }")).toBe(false);
  });

  it("a theme missing a property the e-mails need stops with the property named", () => {
    expect(() => mailLookOf(themeCss.replace(/--brand:[^;]+;/, ""))).toThrow(/app\/theme\.css must declare --brand/);
    expect(() => mailLookOf(themeCss.replace(/--logo:[^;]+;/, "--logo: none;"))).toThrow(/--logo must be url/);
    expect(mailLookOf(themeCss.replace(/--brand:[^;]+;/, "--brand: #123456;")).brand).toBe("#123456");
  });
});

describe("an e-mail's look", () => {
  let undo: (() => void) | null = null;
  afterEach(() => {
    undo?.();
    undo = null;
  });

  const brand = lightProperties(themeCss)["--brand"]!;
  const origin = "https://notes.example";
  const url = `${origin}/auth/callback/email?token=x`;
  const messages = () => ({
    signIn: signInMessage({ to: "ada@example.com", url, host: "notes.example", maxAgeSeconds: 600, code: { code: "123456", maxAgeSeconds: 600 } }),
    signUp: signUpMessage({ to: "ada@example.com", url, host: "notes.example", maxAgeSeconds: 600 }),
    change: changeEmailMessage({ to: "ada@example.com", url, host: "notes.example", maxAgeSeconds: 600 }),
    reset: resetPasswordMessage({ to: "ada@example.com", url, host: "notes.example", maxAgeSeconds: 600 }),
    exists: accountExistsMessage({ to: "ada@example.com", url, host: "notes.example", maxAgeSeconds: 600, forgotPasswordUrl: `${origin}/auth/forgot-password` }),
    reauth: reauthCodeMessage({ to: "ada@example.com", origin, code: "123456", maxAgeSeconds: 600 }),
    notice: securityNoticeMessage({ to: "ada@example.com", host: "notes.example", subject: "Your password was changed", what: "The password was changed.", at: new Date(0), device: "Firefox on Linux", help: { forgotPasswordUrl: null, signInUrl: `${origin}/auth/signin` }, wasntMeUrl: `${origin}/auth/wasnt-me?token=y` }),
  });

  it("every message names the site (AUTH_SITE_NAME) in its HTML and text parts, with the theme's colour and the logo under the site's address", () => {
    undo = withEnv({ AUTH_SITE_NAME: "Acme Notes" });
    for (const [kind, mail] of Object.entries(runWithLocale("fr", messages))) {
      expect(mail.text, kind).toContain("Acme Notes");
      expect(mail.html, kind).toMatch(/<img src="https:\/\/notes\.example\/logo\.png" alt="" width="32" height="32"[^>]*>Acme Notes<\/p>/);
      expect(mail.html, kind).toContain(`border-top:4px solid ${brand}`);
      expect(mail.html, kind).toContain(`background:${lightProperties(themeCss)["--card"]}`);
      expect(mail.html, kind).not.toContain("Vestibule");
    }
    const { signIn, notice } = messages();
    expect(signIn.html).toContain(`background:${brand};color:${lightProperties(themeCss)["--brand-text"]}`);
    expect(notice.html).toMatch(new RegExp(`<a href="${origin}/auth/signin" style="color:${brand}">`));
  });

  it("the logo is the theme's --logo: a path under the site's address, or an absolute URL as it is", () => {
    expect(logoUrl(mailLookOf(themeCss), "http://localhost:5173")).toBe("http://localhost:5173/logo.png");
    expect(logoUrl(mailLookOf(themeCss.replace(/--logo:[^;]+;/, '--logo: url("https://cdn.example/acme.png");')), origin)).toBe("https://cdn.example/acme.png");
  });
});
