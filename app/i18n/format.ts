// Turning a catalogue key and its values into text, for the server and the browser alike: ICU
// messages (plurals, selects) through @formatjs/intl (react-intl's core), one formatter per language and catalogue.
// No server-only imports: the pages' hook (./react.tsx) and the server's t (./t.server.ts) share it.
import { createIntl, createIntlCache, type IntlShape } from "@formatjs/intl";
import type { Messages as Catalogue, MessageKey } from "./catalogues/en";

export type MessageValues = Record<string, string | number | Date | null | undefined>;

const cache = createIntlCache();
const formatters = new WeakMap<object, IntlShape<string>>();

function intlFor(locale: string, messages: Catalogue): IntlShape<string> {
  let intl = formatters.get(messages);
  if (!intl) {
    intl = createIntl(
      {
        locale,
        defaultLocale: "en",
        messages,
        // A missing key or a value that does not fit is a bug the catalogue tests catch; a page
        // still shows the key rather than failing.
        onError: () => {},
      },
      cache,
    );
    formatters.set(messages, intl);
  }
  return intl;
}

/**
 * A message with markup or element values ("<strong>{address}</strong>", a date element): the
 * pieces, with each tag given to its function in `values`. For React (./react.tsx).
 */
export function formatRich<T>(locale: string, messages: Catalogue, key: MessageKey, values: Record<string, T | string | number | ((chunks: (T | string)[]) => T)>): string | (T | string)[] {
  return intlFor(locale, messages).formatMessage({ id: key }, values as never) as unknown as string | (T | string)[];
}

/** The text of `key` in `messages`, with `values` put in (plurals by the language's rules). */
export function formatMessage(locale: string, messages: Catalogue, key: MessageKey, values?: MessageValues): string {
  return intlFor(locale, messages).formatMessage({ id: key }, values as Record<string, string | number | Date>) as string;
}
