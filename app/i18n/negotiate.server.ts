// Which language a request is answered in: the `lang` cookie the language
// menu sets, when it names a supported language; else the best supported language of
// Accept-Language by its quality values; else English. Anything malformed is ignored, never an
// error. docs/decisions/070-languages.md
import { LANGUAGE_COOKIE, parseCookieHeader } from "../auth/core/cookies.server";
import { DEFAULT_LOCALE, isLocale, type Locale } from "./languages.server";

/** A header longer than this is read no further (a real one is a few dozen characters). */
const MAX_ACCEPT_LANGUAGE = 512;
const MAX_RANGES = 32;
/** RFC 9110 language-range: `*` or 1–8 letters, then `-` and 1–8 letters or digits, repeatedly. */
const LANGUAGE_RANGE = /^(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)$/;
const QUALITY = /^[qQ]=(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;

/** The supported language a tag like "de-AT" or "FR" means, if any (its primary subtag). */
function supported(range: string): Locale | null {
  const primary = range.split("-")[0]!.toLowerCase();
  return isLocale(primary) ? primary : null;
}

/** The best supported language of an Accept-Language header, honouring quality values; null if none. */
export function fromAcceptLanguage(header: string | null | undefined): Locale | null {
  if (!header) return null;
  const ranges: { locale: Locale; q: number; order: number }[] = [];
  // A longer header is cut after its last whole range: a range cut in half is not read.
  const kept = header.length > MAX_ACCEPT_LANGUAGE ? header.slice(0, header.lastIndexOf(",", MAX_ACCEPT_LANGUAGE) + 1) : header;
  const parts = kept.split(",").slice(0, MAX_RANGES);
  parts.forEach((part, order) => {
    const [rawRange, ...params] = part.split(";").map((s) => s.trim());
    if (!rawRange || !LANGUAGE_RANGE.test(rawRange) || rawRange === "*") return;
    let q = 1;
    for (const param of params) {
      const match = QUALITY.exec(param);
      if (!match) return; // a malformed weight: the whole range is ignored
      q = Number(match[1]);
    }
    const locale = supported(rawRange);
    if (locale && q > 0) ranges.push({ locale, q, order });
  });
  ranges.sort((a, b) => b.q - a.q || a.order - b.order);
  return ranges[0]?.locale ?? null;
}

/** The `lang` cookie's language, when it names a supported one exactly. */
export function fromLanguageCookie(cookieHeader: string | null | undefined): Locale | null {
  // Every request asks, most carry no such cookie: a name is a slice of the header, so a header
  // without the name's text has no such cookie, and is not parsed into a map for nothing.
  if (!cookieHeader?.includes(LANGUAGE_COOKIE)) return null;
  const value = parseCookieHeader(cookieHeader).get(LANGUAGE_COOKIE);
  return isLocale(value) ? value : null;
}

/** The language to answer `request` in. */
export function negotiateLocale(request: Request): Locale {
  return fromLanguageCookie(request.headers.get("Cookie")) ?? fromAcceptLanguage(request.headers.get("Accept-Language")) ?? DEFAULT_LOCALE;
}
