// The server's `t(key, values)`: text in the language of the request being served. The root
// middleware runs every request inside runWithLocale (the language negotiated from its `lang`
// cookie and Accept-Language, ./negotiate.server.ts); code outside a request (scripts, unit
// tests) gets English. Form refusals, notices and e-mails are written with it, so whatever the
// server puts into a page or a message is already in the visitor's language.
import { AsyncLocalStorage } from "node:async_hooks";
import type { MessageKey } from "./catalogues/en";
import { formatMessage, type MessageValues } from "./format";
import { DEFAULT_LOCALE, directionOf, messagesOf, type Locale } from "./languages.server";

const requestLocale = new AsyncLocalStorage<Locale>();

/** Runs `fn` so that every `t` it calls, however deep, writes in `locale`. */
export function runWithLocale<T>(locale: Locale, fn: () => T): T {
  return requestLocale.run(locale, fn);
}

/** The language of the request being served; English outside one. */
export function currentLocale(): Locale {
  return requestLocale.getStore() ?? DEFAULT_LOCALE;
}

export function currentDirection(): "ltr" | "rtl" {
  return directionOf(currentLocale());
}

/** The text of `key` in the current request's language. */
export function t(key: MessageKey, values?: MessageValues): string {
  const locale = currentLocale();
  return formatMessage(locale, messagesOf(locale), key, values);
}

/** The English text of `key`: for the few answers that must not change with the language (JSON). */
export function inEnglish(key: MessageKey, values?: MessageValues): string {
  return formatMessage(DEFAULT_LOCALE, messagesOf(DEFAULT_LOCALE), key, values);
}

export type { MessageKey };
