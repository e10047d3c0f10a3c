// The site's name on the pages (AUTH_SITE_NAME): the root loader hands it
// down from the configuration, the one place that reads the setting; the layout provides it here.
import { createContext, useContext, type ReactNode } from "react";
import { DEFAULT_SITE_NAME, pageTitle } from "~/site";

const SiteNameContext = createContext<string>(DEFAULT_SITE_NAME);

export function SiteNameProvider({ name, children }: { name: string | undefined; children: ReactNode }) {
  return <SiteNameContext.Provider value={name ?? DEFAULT_SITE_NAME}>{children}</SiteNameContext.Provider>;
}

/** The site's name, as the operator set it. */
export function useSiteName(): string {
  return useContext(SiteNameContext);
}

/** The document's <title>: the page first, then the site's name. */
export function PageTitle({ page }: { page?: string }) {
  return <title>{pageTitle(useSiteName(), page)}</title>;
}
