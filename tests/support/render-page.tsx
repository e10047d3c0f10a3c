// A route's page as the server renders it, in a language: the real loader's (and action's) data
// handed to the route's own component inside the I18nProvider the root layout gives it. For tests
// that check the words a visitor reads without starting a browser.
import { renderToString } from "react-dom/server";
import { createRoutesStub } from "react-router";
import { I18nProvider } from "../../app/i18n/react";
import { directionOf, messagesOf, type Locale } from "../../app/i18n/languages.server";
import { runWithLocale } from "../../app/i18n/t.server";

export const LOCALES = ["en", "fr", "de", "ar"] as const satisfies readonly Locale[];

type PageProps = { loaderData: unknown; actionData?: unknown };

/** Renders `route`'s component at `path` with `loaderData` (and `actionData`), in `locale`. */
export function renderPage(route: { default: unknown }, path: string, locale: Locale, props: PageProps): string {
  const Page = route.default as (props: PageProps) => React.ReactNode;
  const pattern = new URL(path, "http://localhost").pathname;
  const Stub = createRoutesStub([{ path: pattern, Component: () => <Page loaderData={props.loaderData} actionData={props.actionData} /> }]);
  return runWithLocale(locale, () =>
    renderToString(
      <I18nProvider locale={locale} dir={directionOf(locale)} messages={messagesOf(locale)}>
        <Stub initialEntries={[path]} />
      </I18nProvider>,
    ),
  );
}

/**
 * The page's text: tags, comments and direction isolates stripped, entities React writes turned
 * back, spaces collapsed. <wbr> and <bdi> (an address inside a sentence, ADR 161) are inline and
 * add no space: "ada@<wbr/>example.com</bdi>." reads "ada@example.com.".
 */
export function textOf(html: string): string {
  return html
    .replace(/<!--.*?-->/g, "")
    .replace(/[\u2066\u2068\u2069]/g, "")
    .replace(/<wbr\/?>|<\/?bdi[^>]*>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/[ \t\r\n]+/g, " ")
    .trim();
}
