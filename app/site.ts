// The site's name, shared by the pages and the messages it sends (no server-only imports). The
// name itself is a setting, AUTH_SITE_NAME, read by app/auth/core/config.server.ts alone; the
// pages get it from the root loader (app/components/site-name.tsx), the server from the config.
export const DEFAULT_SITE_NAME = "Vestibule";

/** A page's <title>: what the page is first, so a list of tabs or a screen reader names it. */
export function pageTitle(site: string, page?: string): string {
  return page ? `${page} · ${site}` : site;
}
