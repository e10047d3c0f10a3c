import { useT } from "~/i18n/react";

type Translate = (key: "device.unknown" | "device.browserOn", values?: { browser: string; os: string }) => string;

/** A short name for the device a User-Agent header describes, e.g. "Firefox on Linux", in `t`'s language. */
export function describeDevice(userAgent: string | null, t: Translate): string {
  if (!userAgent) return t("device.unknown");
  const browser = /Firefox\//.test(userAgent) ? "Firefox" : /Edg\//.test(userAgent) ? "Edge" : /Chrom(e|ium)\//.test(userAgent) ? "Chrome" : /Safari\//.test(userAgent) ? "Safari" : null;
  const os = /Windows/.test(userAgent) ? "Windows" : /Mac OS X/.test(userAgent) ? "macOS" : /Android/.test(userAgent) ? "Android" : /iPhone|iPad/.test(userAgent) ? "iOS" : /Linux/.test(userAgent) ? "Linux" : null;
  if (browser && os) return t("device.browserOn", { browser, os });
  return browser ?? os ?? userAgent.slice(0, 60);
}

/** describeDevice in the page's language. */
export function useDescribeDevice(): (userAgent: string | null) => string {
  const t = useT();
  return (userAgent) => describeDevice(userAgent, t);
}
