// Every language has every key of the English catalogue and no other, each message is valid ICU
// and uses exactly the placeholders and tags of its English text, and plurals cover the
// language's forms. (A missing or extra key also fails `npm run typecheck`: docs/decisions/070.)
// Each language's text is the layer's catalogue and the app's own merged (app/i18n/merge.ts), so
// every check below covers both; a key both define stops the load.
import { parse, TYPE, type MessageFormatElement } from "@formatjs/icu-messageformat-parser";
import { describe, expect, it } from "vitest";
import { appAr } from "../../../app/i18n/app/ar";
import { appDe } from "../../../app/i18n/app/de";
import { appEn } from "../../../app/i18n/app/en";
import { appFr } from "../../../app/i18n/app/fr";
import { en as layerEn, type Messages } from "../../../app/i18n/catalogues/en";
import { mergeCatalogues } from "../../../app/i18n/merge";
import appConfig from "../../../app/auth.config";
import { formatMessage } from "../../../app/i18n/format";
import { DEFAULT_LOCALE, directionOf, LANGUAGES, LOCALES, messagesOf, type Locale } from "../../../app/i18n/languages.server";
import { runWithLocale, t } from "../../../app/i18n/t.server";
import { describeLifetime, signInMessage } from "../../../app/mail/templates.server";
import { rateLimitedMessage } from "../../../app/auth/core/messages.server";

type Shape = { args: Set<string>; tags: Set<string>; plurals: { name: string; options: string[] }[] };

function shapeOf(elements: MessageFormatElement[], shape: Shape = { args: new Set(), tags: new Set(), plurals: [] }): Shape {
  for (const el of elements) {
    if (el.type === TYPE.argument || el.type === TYPE.number || el.type === TYPE.date || el.type === TYPE.time) shape.args.add(el.value);
    if (el.type === TYPE.tag) {
      shape.tags.add(el.value);
      shapeOf(el.children, shape);
    }
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      shape.args.add(el.value);
      if (el.type === TYPE.plural) shape.plurals.push({ name: el.value, options: Object.keys(el.options) });
      for (const option of Object.values(el.options)) shapeOf(option.value, shape);
    }
  }
  return shape;
}

/** Sample values for exactly the names `message` declares: a number for a plural or number, a date for a date or time, a function for a tag, else a word. */
function sampleValuesOf(elements: MessageFormatElement[], values: Record<string, unknown> = {}): Record<string, unknown> {
  for (const el of elements) {
    if (el.type === TYPE.argument || el.type === TYPE.select) values[el.value] ??= "W";
    if (el.type === TYPE.number || el.type === TYPE.plural) values[el.value] = 3;
    if (el.type === TYPE.date || el.type === TYPE.time) values[el.value] = new Date(0);
    if (el.type === TYPE.tag) {
      values[el.value] = (chunks: string[]) => chunks.join("");
      sampleValuesOf(el.children, values);
    }
    if (el.type === TYPE.plural || el.type === TYPE.select) for (const option of Object.values(el.options)) sampleValuesOf(option.value, values);
  }
  return values;
}

/** `key` of `messages` formats, with values for the names it declares, to non-empty text with no brace left. */
function expectFormatsCleanly(locale: string, messages: Record<string, string>, key: string) {
  const text = formatMessage(locale, messages as never, key as keyof Messages, sampleValuesOf(parse(messages[key]!)) as never);
  expect(text, `${locale} ${key}`).not.toMatch(/[{}]/);
  expect(text.length, `${locale} ${key}`).toBeGreaterThan(0);
}

const en: Messages = messagesOf("en");
const englishKeys = Object.keys(en).sort();
const others = LOCALES.filter((l) => l !== DEFAULT_LOCALE);

describe("message catalogues", () => {
  it("speaks at least English, German, French and Arabic, Arabic right to left", () => {
    expect(LOCALES).toEqual(expect.arrayContaining(["en", "de", "fr", "ar"]));
    expect(directionOf("ar")).toBe("rtl");
    expect(LOCALES.filter((l) => l !== "ar").map(directionOf)).toEqual(LOCALES.filter((l) => l !== "ar").map(() => "ltr"));
  });

  it("each language's text is the layer's catalogue and the app's own, every key of both", () => {
    const apps = { en: appEn, de: appDe, fr: appFr, ar: appAr };
    for (const locale of LOCALES) {
      const messages = messagesOf(locale);
      for (const [key, text] of Object.entries(apps[locale as keyof typeof apps])) expect(messages[key as keyof Messages], `${locale} ${key}`).toBe(text);
    }
    expect(englishKeys).toEqual([...Object.keys(layerEn), ...Object.keys(appEn)].sort());
    expect(Object.keys(appEn).length).toBeGreaterThan(0);
  });

  it.each(others)("the app's %s catalogue has every key of the app's English one and no other", (locale) => {
    const apps = { de: appDe, fr: appFr, ar: appAr };
    expect(Object.keys(apps[locale as keyof typeof apps]).sort()).toEqual(Object.keys(appEn).sort());
  });

  it("the label of each role app/auth.config.ts adds is the app's text (app/i18n/app/), the layer's roles' the layer's", () => {
    const added = Object.keys(appConfig.roles ?? {});
    expect(added.length).toBeGreaterThan(0);
    for (const role of added) {
      expect(Object.keys(appEn), role).toContain(`admin.role.${role}`);
      expect(Object.keys(layerEn), role).not.toContain(`admin.role.${role}`);
    }
    for (const role of ["user", "admin"]) expect(Object.keys(layerEn)).toContain(`admin.role.${role}`);
  });

  it("an app key the layer already has stops the load, naming the key and both files", () => {
    const clash = { ...appEn, "signin.title": "My sign-in" } as typeof appEn;
    expect(() => mergeCatalogues("fr", layerEn, clash)).toThrow(/app\/i18n\/app\/fr\.ts defines "signin\.title".*app\/i18n\/catalogues\/fr\.ts/);
    expect(mergeCatalogues("en", layerEn, appEn)["example.session.title"]).toBe("Session example");
  });

  it.each(others)("%s has every English key and no other", (locale) => {
    expect(Object.keys(messagesOf(locale)).sort()).toEqual(englishKeys);
  });

  it.each(LOCALES)("every %s message parses as ICU MessageFormat", (locale) => {
    for (const [key, message] of Object.entries(messagesOf(locale))) {
      expect(() => parse(message), `${locale} ${key}`).not.toThrow();
    }
  });

  it.each(others)("every %s message has the placeholders and tags of its English text", (locale) => {
    const messages = messagesOf(locale);
    for (const key of englishKeys) {
      const english = shapeOf(parse(en[key as keyof Messages]));
      const translated = shapeOf(parse(messages[key as keyof Messages]));
      expect([...translated.args].sort(), `${locale} ${key}: placeholders`).toEqual([...english.args].sort());
      expect([...translated.tags].sort(), `${locale} ${key}: tags`).toEqual([...english.tags].sort());
    }
  });

  it.each(LOCALES)("every %s plural covers the language's own plural forms", (locale) => {
    // The forms whole numbers up to 1000 take in this language (French "many" is for millions).
    const rules = new Intl.PluralRules(locale);
    const needed = [...new Set(Array.from({ length: 1001 }, (_, n) => rules.select(n)))];
    for (const [key, message] of Object.entries(messagesOf(locale))) {
      for (const plural of shapeOf(parse(message)).plurals) {
        expect(plural.options, `${locale} ${key}`).toEqual(expect.arrayContaining(needed));
      }
    }
  });

  it.each(LOCALES)("every %s message formats with sample values, without leftover braces", (locale) => {
    for (const key of englishKeys) expectFormatsCleanly(locale, messagesOf(locale) as Record<string, string>, key);
  });

  it("a message with a placeholder of any name ({user}, a tag, a plural) formats with values for its own names", () => {
    const messages = { "sample.user": "Signed in as <strong>{user}</strong> {count, plural, one {# time} other {# times}} on {day, date, short}, {tone, select, warm {hi} other {hello}}" };
    expectFormatsCleanly("en", messages, "sample.user");
  });

  it("the German and French texts are not the English ones (a key left untranslated is a bug)", () => {
    // Texts that are the same word in every language (brand names, a code, an address pattern).
    const same = new Set(["signin.emailPlaceholder", "activity.withMethod", "home.signedInEmail", "outbox.html", "twoFactor.codeLabel", "passkey.heading", "mail.linkLabel", "account.name", "methods.password", "passkey.rename", "account.profile", "signup.nameLabel", "outbox.code", "lifetime.minutes", "error.RateLimited", "password.heading", "signin.passwordLabel", "signup.passwordLabel", "emailCode.newPassword", "password.new", "reset.passwordLabel", "admin.title", "admin.role.admin", "admin.users.name", "admin.actions.heading", "admin.user.sessions", "org.role.admin", "org.new.name", "org.members.person", "org.members.actions", "org.invite.title", "org.domains.title", "org.domains.recordType", "org.domains.txt", "org.domains.domain", "org.audit.details", "org.invitation.title", "passkey.defaultName", "passkey.defaultNameNumbered", "passkey.defaultNameBare", "passkey.defaultNameBareNumbered"]);
    for (const locale of ["de", "fr"] as Locale[]) {
      const messages = messagesOf(locale);
      const untranslated = englishKeys.filter((k) => !same.has(k) && messages[k as keyof Messages] === en[k as keyof Messages]);
      expect(untranslated, locale).toEqual([]);
    }
  });
});

describe("the server's t()", () => {
  it("writes in the request's language, English outside a request", () => {
    expect(t("error.default")).toBe("Unable to sign in.");
    expect(runWithLocale("de", () => t("error.default"))).toBe("Anmeldung nicht möglich.");
    expect(runWithLocale("fr", () => rateLimitedMessage(1))).toBe("Trop de tentatives. Réessayez dans 1 minute.");
  });

  it("uses each language's plural rules (Arabic: one, two, few, many)", () => {
    const minutes = (n: number) => runWithLocale("ar", () => rateLimitedMessage(n));
    expect(minutes(1)).toContain("دقيقة واحدة");
    expect(minutes(2)).toContain("دقيقتين");
    expect(minutes(3)).toContain("3 دقائق");
    expect(minutes(15)).toContain("15 دقيقة");
    expect(runWithLocale("de", () => describeLifetime(5_400))).toBe("1 Stunde und 30 Minuten");
  });

  it("writes an e-mail in the request's language, with its language and direction in the HTML", () => {
    const input = { to: "ada@example.com", url: "https://app.example/x", host: "app.example", maxAgeSeconds: 86_400 };
    const de = runWithLocale("de", () => signInMessage(input));
    expect(de.subject).toBe("Bei Vestibule anmelden");
    expect(de.text).toContain("24 Stunden");
    expect(de.html).toMatch(/<html lang="de">/);
    const ar = runWithLocale("ar", () => signInMessage(input));
    expect(ar.html).toMatch(/<html lang="ar" dir="rtl">/);
    expect(ar.subject).toBe("تسجيل الدخول إلى Vestibule");
    expect(signInMessage(input).html).toMatch(/<html lang="en">/);
  });

  it("lists each language once, named in itself", () => {
    expect(Object.values(LANGUAGES).map((l) => l.messages["language.name"])).toEqual(["English", "Deutsch", "Français", "العربية"]);
  });
});

describe("the catalogue a page sends", () => {
  it("leaves out the dev outbox's texts in production, keeps them in development", async () => {
    const { pageMessages } = await import("../../../app/i18n/languages.server");
    expect(JSON.stringify(pageMessages("en", true))).not.toContain("Dev outbox");
    expect(pageMessages("en", true)["signin.title"]).toBe("Sign in");
    expect(pageMessages("en", false)["outbox.title"]).toBe("Dev outbox");
  });
});
