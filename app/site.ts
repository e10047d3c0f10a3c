// The site's name, shared by the pages and the messages it sends (no server-only imports).
export const SITE_NAME = "Vestibule";

/** A page's <title>: what the page is first, so a list of tabs or a screen reader names it. */
export function pageTitle(page?: string): string {
  return page ? `${page} · ${SITE_NAME}` : SITE_NAME;
}
