// The languages Vestibule speaks: one catalogue file per language under
// ./catalogues for the auth layer and one under ./app for the app's own text, merged here at load
// (./merge.ts: a key both define stops the start), and one line here. English is the source of
// the keys (MessageKey) and the answer whenever nothing better is known.
// docs/decisions/070-languages.md, docs/features/languages.md
import { appAr } from "./app/ar";
import { appDe } from "./app/de";
import { appEn } from "./app/en";
import { appFr } from "./app/fr";
import { ar } from "./catalogues/ar";
import { de } from "./catalogues/de";
import { en } from "./catalogues/en";
import { fr } from "./catalogues/fr";
import type { Messages as Catalogue } from "./catalogues/en";
import { mergeCatalogues } from "./merge";

export const LANGUAGES = {
  en: { messages: mergeCatalogues("en", en, appEn), dir: "ltr" },
  de: { messages: mergeCatalogues("de", de, appDe), dir: "ltr" },
  fr: { messages: mergeCatalogues("fr", fr, appFr), dir: "ltr" },
  ar: { messages: mergeCatalogues("ar", ar, appAr), dir: "rtl" },
} as const satisfies Record<string, { messages: Catalogue; dir: "ltr" | "rtl" }>;

export type Locale = keyof typeof LANGUAGES;
export const DEFAULT_LOCALE: Locale = "en";
export const LOCALES = Object.keys(LANGUAGES) as Locale[];

/** True for a supported language code, exactly as this list writes it (never a prototype key). */
export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && Object.hasOwn(LANGUAGES, value);
}

export function messagesOf(locale: Locale): Catalogue {
  return LANGUAGES[locale].messages;
}

export function directionOf(locale: Locale): "ltr" | "rtl" {
  return LANGUAGES[locale].dir;
}

/** Texts of pages only development has (the dev outbox, which no production build mounts). */
const DEVELOPMENT_ONLY = /^outbox\./;

/**
 * The catalogue a page sends the browser: in production without the development pages' texts,
 * so nothing of the dev outbox reaches a production page.
 */
export function pageMessages(locale: Locale, production: boolean): Catalogue {
  const messages = messagesOf(locale);
  if (!production) return messages;
  let kept = productionMessages.get(locale);
  if (!kept) {
    kept = Object.fromEntries(Object.entries(messages).filter(([key]) => !DEVELOPMENT_ONLY.test(key))) as Catalogue;
    productionMessages.set(locale, kept);
  }
  return kept;
}
const productionMessages = new Map<Locale, Catalogue>();

/** What the language menu lists: each language named in itself. */
export function languageChoices(): { code: Locale; name: string }[] {
  return LOCALES.map((code) => ({ code, name: LANGUAGES[code].messages["language.name"] }));
}
