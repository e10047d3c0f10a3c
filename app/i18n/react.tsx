// The pages' side of the catalogue: the root layout provides the language and its catalogue (sent
// by the root loader, so the browser holds only the language it shows), and every component
// writes its text with
//
//   const t = useT();   …   <h1>{t("signin.title")}</h1>   t("signin.withProvider", { name })
//
// Keys are typed by the English catalogue: a key that does not exist fails `npm run typecheck`.
import { createContext, Fragment, useContext, useMemo, type ReactNode } from "react";
import { IntlProvider } from "react-intl";
import { appEn } from "./app/en";
import { en as layerEn, type Messages as Catalogue, type MessageKey } from "./catalogues/en";
import { formatMessage, formatRich, type MessageValues } from "./format";
import { mergeCatalogues } from "./merge";

/** English, the layer's and the app's: the text outside the layout's provider (a component test). */
const en = mergeCatalogues("en", layerEn, appEn);

type Language = { locale: string; dir: "ltr" | "rtl"; messages: Catalogue };
const LanguageContext = createContext<Language>({ locale: "en", dir: "ltr", messages: en });

/** Wraps the page: `locale` and `messages` from the root loader; English when they are missing. */
export function I18nProvider({ locale, dir, messages, children }: Partial<Language> & { children: ReactNode }) {
  const value = useMemo<Language>(
    () => (locale && messages ? { locale, dir: dir ?? "ltr", messages } : { locale: "en", dir: "ltr", messages: en }),
    [locale, dir, messages],
  );
  return (
    <LanguageContext.Provider value={value}>
      <IntlProvider locale={value.locale} defaultLocale="en" messages={value.messages} onError={() => {}}>
        {children}
      </IntlProvider>
    </LanguageContext.Provider>
  );
}

type RichValues = Record<string, ReactNode | ((chunks: ReactNode[]) => ReactNode)>;

export type Translate = ((key: MessageKey, values?: MessageValues) => string) & {
  /** A text with markup: `t.rich("x", { strong: (c) => <strong>{c}</strong>, address })` for "<strong>{address}</strong>". */
  rich(key: MessageKey, values: RichValues): ReactNode;
};

/**
 * An e-mail address put into a sentence of a right-to-left page reads as one left-to-right run:
 * "pen@example.com." must not become ".pen@example.com" in Arabic. Unicode's first-strong
 * isolate does that without markup, in any attribute or text. (Left-to-right pages need none.)
 */
function isolateAddress<V extends Record<string, unknown> | undefined>(dir: "ltr" | "rtl", values: V): V {
  if (dir !== "rtl" || !values || typeof values.address !== "string") return values;
  return { ...values, address: `\u2068${values.address}\u2069` };
}

/** `t(key, values)` in the page's language (English outside the layout's provider, e.g. in a test). */
export function useT(): Translate {
  const { locale, dir, messages } = useContext(LanguageContext);
  return useMemo<Translate>(() => {
    const t = ((key, values) => formatMessage(locale, messages, key, isolateAddress(dir, values))) as Translate;
    t.rich = (key, values) => {
      const parts = formatRich<ReactNode>(locale, messages, key, values as never);
      return Array.isArray(parts) ? parts.map((part, i) => <Fragment key={i}>{part}</Fragment>) : parts;
    };
    return t;
  }, [locale, dir, messages]);
}

/** The page's language code ("en", "ar", …) and writing direction. */
export function useLanguage(): { locale: string; dir: "ltr" | "rtl" } {
  const { locale, dir } = useContext(LanguageContext);
  return { locale, dir };
}

export type { MessageKey };
