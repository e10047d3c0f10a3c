import { useT } from "~/i18n/react";

type Translate = (key: "device.unknown" | "device.browserOn", values?: { browser: string; os: string }) => string;

/** A short name for the device a User-Agent header describes, e.g. "Firefox on Linux", in `t`'s language. */
export function describeDevice(userAgent: string | null, t: Translate): string {
  if (!userAgent) return t("device.unknown");
  const browser = /Firefox\//.test(userAgent) ? "Firefox" : /Edg\//.test(userAgent) ? "Edge" : /Chrom(e|ium)\//.test(userAgent) ? "Chrome" : /Safari\//.test(userAgent) ? "Safari" : null;
  const os = /Windows/.test(userAgent) ? "Windows" : /Mac OS X/.test(userAgent) ? "macOS" : /Android/.test(userAgent) ? "Android" : /iPhone|iPad/.test(userAgent) ? "iOS" : /Linux/.test(userAgent) ? "Linux" : null;
  if (browser && os) return t("device.browserOn", { browser, os });
  return browser ?? os ?? productName(userAgent) ?? t("device.unknown");
}

/**
 * The first product name of a User-Agent header ("curl" of "curl/8.5.0"), in short plain letters:
 * the header is the client's to write, and a security e-mail must not carry a sentence, an
 * address or a link of its choosing ("Visit evil.example to secure your account").
 */
function productName(userAgent: string): string | null {
  return /^([A-Za-z][A-Za-z0-9_-]{0,23})\//.exec(userAgent)?.[1] ?? null;
}

/** describeDevice in the page's language. */
export function useDescribeDevice(): (userAgent: string | null) => string {
  const t = useT();
  return (userAgent) => describeDevice(userAgent, t);
}
