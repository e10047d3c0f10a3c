import { useT } from "~/i18n/react";

/** A short name for the device a User-Agent header describes, e.g. "Firefox on Linux". */
export function useDescribeDevice(): (userAgent: string | null) => string {
  const t = useT();
  return (userAgent) => {
    if (!userAgent) return t("device.unknown");
    const browser = /Firefox\//.test(userAgent) ? "Firefox" : /Edg\//.test(userAgent) ? "Edge" : /Chrom(e|ium)\//.test(userAgent) ? "Chrome" : /Safari\//.test(userAgent) ? "Safari" : null;
    const os = /Windows/.test(userAgent) ? "Windows" : /Mac OS X/.test(userAgent) ? "macOS" : /Android/.test(userAgent) ? "Android" : /iPhone|iPad/.test(userAgent) ? "iOS" : /Linux/.test(userAgent) ? "Linux" : null;
    if (browser && os) return t("device.browserOn", { browser, os });
    return browser ?? os ?? userAgent.slice(0, 60);
  };
}
