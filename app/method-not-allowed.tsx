// The answer to a method a page does not take (POST to a page without an action, OPTIONS, PUT …):
// 405 with `Allow` and a small static page. React Router's own 405 carries its internal message
// ("You made a POST request to … but did not provide an `action` …") in the hydration data, so
// this page is rendered instead of the route tree, without scripts. docs/decisions/033.
import { renderToStaticMarkup } from "react-dom/server";
import { matchRoutes, type EntryContext, type RouteObject } from "react-router";
import stylesheet from "./app.css?url";
import { formatMessage } from "./i18n/format";
import { directionOf, messagesOf, type Locale } from "./i18n/languages.server";
import { negotiateLocale } from "./i18n/negotiate.server";
import { getConfig } from "./auth/core/config.server";
import { pageTitle } from "./site";

function MethodNotAllowedPage({ locale }: { locale: Locale }) {
  const t = (key: "methodNotAllowed.heading" | "methodNotAllowed.message" | "common.homeLink") => formatMessage(locale, messagesOf(locale), key);
  const HEADING = t("methodNotAllowed.heading");
  const { siteName } = getConfig();
  return (
    <html lang={locale} dir={directionOf(locale)}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{pageTitle(siteName, HEADING)}</title>
        <link rel="stylesheet" href={stylesheet} />
      </head>
      <body>
        <header className="site-header">
          <a href="/" className="brand">
            {siteName}
          </a>
        </header>
        <div id="content">
          <main>
            <section className="card">
              <h1>{HEADING}</h1>
              <p>{t("methodNotAllowed.message")}</p>
              <p>
                <a href="/">{t("common.homeLink")}</a>
              </p>
            </section>
          </main>
        </div>
      </body>
    </html>
  );
}

/** The route tree from the build's manifest (React Router hands an OPTIONS request only the root match). */
function routeTree(manifest: EntryContext["manifest"], parentId: string | undefined = undefined): RouteObject[] {
  return Object.values(manifest.routes).flatMap((r): RouteObject[] => {
    if (!r || r.parentId !== parentId) return [];
    return [r.index ? { id: r.id, path: r.path, index: true } : { id: r.id, path: r.path, caseSensitive: r.caseSensitive, children: routeTree(manifest, r.id) }];
  });
}

/**
 * The methods the request's target page takes: the route React Router would send a form to (the
 * deepest match; an index route only with `?index`), with POST when it has an action.
 */
export function allowedMethods(request: Request, context: EntryContext): string {
  const url = new URL(request.url);
  const matches = matchRoutes(routeTree(context.manifest), url.pathname) ?? [];
  let target = matches[matches.length - 1];
  if (target?.route.index && !url.searchParams.has("index")) target = matches[matches.length - 2] ?? target;
  const id = target?.route.id;
  const hasAction = id ? Boolean(context.manifest.routes[id]?.hasAction) : false;
  return hasAction ? "GET, HEAD, POST" : "GET, HEAD";
}

export function methodNotAllowed(request: Request, headers: Headers, context: EntryContext): Response {
  headers.set("Allow", allowedMethods(request, context));
  headers.set("Content-Type", "text/html; charset=utf-8");
  headers.set("Cache-Control", "no-store");
  return new Response(`<!DOCTYPE html>${renderToStaticMarkup(<MethodNotAllowedPage locale={negotiateLocale(request)} />)}`, { status: 405, headers });
}
