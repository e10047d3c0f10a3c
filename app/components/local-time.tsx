import { useSyncExternalStore } from "react";
import { useLanguage } from "~/i18n/react";

// The browser's time zone, once the page runs in one (ADR 071). The server and the hydrating
// render both use UTC — the zone is named in the text, so it is right without JavaScript — and
// React re-renders with the browser's zone right after hydration, so the two renders never
// disagree (no hydration mismatch); a client-side navigation uses the browser's zone at once.
const subscribe = () => () => {};
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const serverZone = () => "UTC";

export function useTimeZone(): string {
  return useSyncExternalStore(subscribe, browserZone, serverZone);
}

/** A date and time in the page's language and the visitor's zone, the zone always named. */
export function formatDateTime(value: string | Date, locale: string, timeZone: string): string {
  const date = typeof value === "string" ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) return "";
  const options: Intl.DateTimeFormatOptions = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZone };
  const short = new Intl.DateTimeFormat(locale, { ...options, timeZoneName: "short" });
  // A zone's short name in another script than the date's ("UTC" in an Arabic date) reads as a
  // stray Latin token: the language's own long name says it in words ("التوقيت العالمي المنسق", ADR 161).
  const parts = short.formatToParts(date);
  const zone = parts.find((p) => p.type === "timeZoneName")?.value ?? "";
  const month = parts.find((p) => p.type === "month")?.value ?? "";
  if (/[A-Za-z]/.test(zone) && !/[A-Za-z]/.test(month)) return new Intl.DateTimeFormat(locale, { ...options, timeZoneName: "long" }).format(date);
  return short.format(date);
}

/** `<time>` for an ISO date: machine-readable in `dateTime`, written for the visitor. */
export function LocalTime({ value }: { value: string }) {
  const { locale } = useLanguage();
  const zone = useTimeZone();
  return <time dateTime={value}>{formatDateTime(value, locale, zone)}</time>;
}
