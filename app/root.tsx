import { useCallback, useContext, useEffect } from "react";
import { data, isRouteErrorResponse, Link, Links, Meta, Outlet, Scripts, ScrollRestoration, UNSAFE_FrameworkContext, useLocation, useRevalidator, useRouteLoaderData } from "react-router";
import type { Route } from "./+types/root";
import stylesheet from "./app.css?url";
import { getConfig, optionalSession } from "~/auth/core";
import { withRequestContext } from "~/auth/core/log.server";
import { answerJsonClient } from "~/auth/core/page-session.server";
import { observeRequest } from "~/auth/core/metrics.server";
import { pageOutageRedirect } from "~/auth/core/outage.server";
import { withHeldCookies } from "~/auth/core/sealed-cookies.server";
import { baseSecurityHeaders, withHeaders } from "~/auth/core/security-headers.server";
import { untrustedHostRefusal } from "~/auth/core/trusted-host.server";
import { crossOriginPostRefusal } from "~/auth/signin";
import { secondFactorSetupRefusal } from "~/auth/accounts";
import { SessionProvider } from "~/auth/react";
import { PageTitle, SiteNameProvider, useSiteName } from "./components/site-name";
import { LanguageMenu } from "./components/language-menu";
import { directionOf, languageChoices, pageMessages } from "./i18n/languages.server";
import { negotiateLocale } from "./i18n/negotiate.server";
import { I18nProvider, useLanguage as useLanguageOfPage, useT } from "./i18n/react";
import { currentLocale, runWithLocale } from "./i18n/t.server";
import { varyOnLanguage } from "./i18n/vary.server";

// The site's icon (public/, drawn by scripts/make-favicon.ts): SVG where the browser takes it, the
// ICO for the rest and for the /favicon.ico every browser asks for anyway.
export const links: Route.LinksFunction = () => [
  { rel: "stylesheet", href: stylesheet },
  { rel: "icon", href: "/favicon.ico", sizes: "32x32" },
  { rel: "icon", href: "/favicon.svg", type: "image/svg+xml" },
];

export async function loader({ request }: Route.LoaderArgs) {
  // The layout only shows who is signed in; rolling the session is left to the page's loader
  // and GET /auth/session so one request never re-issues the cookie twice.
  const { session, headers } = await optionalSession(request, { roll: false });
  // The page's language (negotiated by the middleware below) and only its catalogue.
  const locale = currentLocale();
  return data(
    // The session, for the layout and for useSession() from ~/auth/react (every page's data has it).
    {
      session: session?.data ?? null,
      siteName: getConfig().siteName,
      locale,
      dir: directionOf(locale),
      messages: pageMessages(locale, getConfig().production),
      languages: languageChoices(),
      // AUTH_ORGANIZATIONS: the layout links to /orgs (docs/features/organizations.md).
      organizations: getConfig().organizations,
    },
    { headers },
  );
}

// Runs for every request React Router answers — pages, .data requests, the JSON endpoints:
// a POST from another site is refused before any action runs (outside the sign-in flow, which
// refuses it through its CSRF check), and every answer carries the base security headers. A
// page's Content-Security-Policy, with its nonce, is set where it is rendered (entry.server.tsx).
// docs/decisions/037-csp-and-origin.md
// Outside server/main.ts (dev server, in-process tests) it also gives the request its id and
// access line, as the server does for every request (docs/decisions/050); and a page that failed
// because the database is unavailable ends on the Configuration error page (docs/decisions/052).
// Each answer's time to its headers is observed once, by its route pattern, for /metrics (ADR 076).
// A sealed cookie this request sent that only an older AUTH_SECRET value opens goes back sealed
// with the first value, and a session cookie a read of the session re-issued (the rolling
// re-issue) goes back, unless the answer sets it itself (ADR 109, ADR 118): a route that forgets
// the `headers` ~/auth gives it still rolls the session.
// Everything runs in the request's language (the `lang` cookie, then Accept-Language, then
// English: docs/decisions/070), so the server's t() writes in it, and the answer says it varies.
export const middleware: Route.MiddlewareFunction[] = [
  async ({ request, pattern }, next) => {
    const started = performance.now();
    const answer = await withRequestContext(
      request,
      () =>
        runWithLocale(negotiateLocale(request), async () => {
          // AUTH_REQUIRE_MFA: a user without a second factor sets one up first (ADR 082).
          // A request naming a host AUTH_ALLOWED_HOSTS does not list builds nothing (ADR 105).
          // A JSON client refused by a ~/auth helper gets the refusal's JSON, not the error page (ADR 118).
          const response = untrustedHostRefusal(request) ?? answerJsonClient(request, pageOutageRedirect(request, await next()));
          // Cookies sealed before AUTH_SECRET was rotated go back sealed with the first value (ADR 109);
          // a re-issued session cookie goes back even when the route dropped it (ADR 118).
          return varyOnLanguage(withHeaders(withHeldCookies(response), baseSecurityHeaders(getConfig())));
        }),
      (response, name, value) => withHeaders(response, { [name]: value }),
    );
    observeRequest(pattern, request.method, answer.status, (performance.now() - started) / 1000);
    return answer;
  },
  // Inside the above (its language, its headers): a POST from another site is refused before any
  // action runs — a form gets the "not allowed" page in the visitor's language, a JSON client
  // `{"error":"Forbidden"}`, a data request the same thrown, for its client's error boundary (ADR 118).
  async ({ request }, next) => {
    const crossSite = crossOriginPostRefusal(request);
    if (crossSite) {
      if (crossSite.thrown) throw crossSite.response;
      return crossSite.response;
    }
    return (await secondFactorSetupRefusal(request)) ?? next();
  },
];

export function Layout({ children }: { children: React.ReactNode }) {
  const data = useRouteLoaderData<typeof loader>("root");
  // <html data-hydrated> says the page is interactive: effects run after React hydrated the
  // document, and the layout's after every route component's (children first). The browser tests
  // wait for it (tests/support/browser.ts gotoHydrated) instead of for a clock or for
  // window.__reactRouterRouteModules, which is set before hydration starts, so a click could
  // still land on server-rendered HTML with no handler. docs/decisions/065-test-suite-speed.md
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  const { revalidate } = useRevalidator();
  const update = useCallback(() => revalidate(), [revalidate]);
  const session = data?.session ?? null;
  return (
    <I18nProvider locale={data?.locale} dir={data?.dir} messages={data?.messages}>
      <SiteNameProvider name={data?.siteName}>
        <SessionProvider session={session} update={update}>
          <Page user={session?.user ?? null} languages={data?.languages ?? []} organizations={data?.organizations ?? false}>
            {children}
          </Page>
        </SessionProvider>
      </SiteNameProvider>
    </I18nProvider>
  );
}

/**
 * Run in the head, before the body is parsed: <html class="js"> says scripts run here, so what only
 * a page without JavaScript needs (class="no-js", app.css) is never painted where they do, not even
 * before hydration. Inline, so it carries the page's CSP nonce (React Router's, from the server
 * render; the browser hides it after load, hence no hydration warning for it).
 */
const MARK_SCRIPTS_RUN = 'document.documentElement.classList.add("js")';

/**
 * The page's CSP nonce: React Router's on the server; in the browser, the one the server gave this
 * page, read back from its first script (the nonce property keeps it where the attribute reads "").
 * <Links> puts it on every <link>: given nothing in the browser, each server-rendered link's nonce
 * was a hydration mismatch on every page under `npm run dev` (issue 33).
 */
function usePageNonce(): string | undefined {
  const serverNonce = useContext(UNSAFE_FrameworkContext)?.nonce;
  if (serverNonce || typeof document === "undefined") return serverNonce;
  return document.querySelector<HTMLScriptElement>("script[nonce]")?.nonce || undefined;
}

function Page({
  user,
  languages,
  organizations,
  children,
}: {
  user: { name?: string | null } | null;
  languages: { code: string; name: string }[];
  organizations: boolean;
  children: React.ReactNode;
}) {
  const t = useT();
  const nonce = usePageNonce();
  const { locale, dir } = useLanguageOfPage();
  const location = useLocation();
  const siteName = useSiteName();
  return (
    // suppressHydrationWarning: its class="js" is the head script's (MARK_SCRIPTS_RUN), added
    // before hydration on purpose; only <html>'s own attributes, not its children.
    <html lang={locale} dir={dir} suppressHydrationWarning>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <script nonce={nonce} suppressHydrationWarning dangerouslySetInnerHTML={{ __html: MARK_SCRIPTS_RUN }} />
        <Meta />
        <Links nonce={nonce} />
      </head>
      <body>
        <a className="skip-link" href="#content">
          {t("layout.skipToContent")}
        </a>
        <header className="site-header">
          <Link to="/" className="brand">
            {siteName}
          </Link>
          <nav aria-label={t("layout.navLabel")}>
            {user ? (
              <>
                {organizations ? <a href="/orgs">{t("org.list.title")}</a> : null}
                <Link to="/account">{t("layout.account")}</Link>
                <a href="/auth/signout">{t("layout.signOut")}</a>
              </>
            ) : (
              <a href="/auth/signin">{t("layout.signIn")}</a>
            )}
            <LanguageMenu languages={languages} current={locale} returnTo={samePagePath(location.pathname, location.search)} />
          </nav>
        </header>
        <div id="content">{children}</div>
        <ScrollRestoration />
        <Scripts />
      </body>
    </html>
  );
}

/** This page's path for the language menu to come back to; a path another origin could read as its own ("//host") is home. */
function samePagePath(pathname: string, search: string): string {
  return /^[/\\]{2}/.test(pathname) ? "/" : `${pathname}${search}`;
}

export default function App() {
  return <Outlet />;
}

/**
 * The sign-in URL of a `403 {"error":"ReauthRequired","url"}` or `401 {"error":"SessionRequired","url"}`
 * answer (`code`; same origin, under /auth/ only), else null.
 */
function signInUrlOf(data: unknown, code: "ReauthRequired" | "SessionRequired"): string | null {
  if (typeof data !== "object" || data === null) return null;
  const { error, url } = data as { error?: unknown; url?: unknown };
  if (error !== code || typeof url !== "string") return null;
  try {
    const parsed = new URL(url, "http://relative.invalid");
    return parsed.pathname.startsWith("/auth/") ? parsed.pathname + parsed.search : null;
  } catch {
    return null;
  }
}

const BOUNDARY_KINDS: Record<number, "notFound" | "badRequest" | "forbidden" | "tooLarge" | "unsupported"> = {
  404: "notFound",
  // A role or permission the user lacks (requireRole, requirePermission), a POST from another site.
  403: "forbidden",
  400: "badRequest",
  413: "tooLarge",
  415: "unsupported",
};

/** Where the form of a refused post is: the sign-in page for the auth endpoints (no page of their own), else the page itself. */
function formPathOf(pathname: string): string {
  if (/^[/\\]{2}/.test(pathname)) return "/";
  return pathname.startsWith("/auth/") && !/^\/auth\/(two-factor|reauth|forgot-password|signup)$/.test(pathname) ? "/auth/signin" : pathname;
}

export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  const t = useT();
  const location = useLocation();
  // Never show a stack trace or an internal message: only the status and a plain sentence.
  const status = isRouteErrorResponse(error) ? error.status : 500;
  // requireRecentAuth's refusal (ADR 058): the page says to sign in again, with the link.
  const reauth = isRouteErrorResponse(error) && status === 403 ? signInUrlOf(error.data, "ReauthRequired") : null;
  // requireUser's refusal of a data request (a navigation or form with JavaScript on, ADR 118): the
  // page says to sign in, with the link that comes back to the page.
  const signIn = isRouteErrorResponse(error) && status === 401 ? signInUrlOf(error.data, "SessionRequired") : null;
  if (signIn) {
    return (
      <main>
        <PageTitle page={t("layout.signIn")} />
        <section className="card">
          <h1>{t("layout.signIn")}</h1>
          <p>{t("error.SessionRequired")}</p>
          <p>
            <a className="button inline" href={signIn} id="session-required-signin">
              {t("layout.signIn")}
            </a>
          </p>
        </section>
      </main>
    );
  }
  if (reauth) {
    return (
      <main>
        <PageTitle page={t("reauth.heading")} />
        <section className="card">
          <h1>{t("reauth.heading")}</h1>
          <p>{t("reauth.required")}</p>
          <p>
            <a className="button inline" href={reauth}>
              {t("reauth.button")}
            </a>
          </p>
        </section>
      </main>
    );
  }
  const kind = BOUNDARY_KINDS[status] ?? "server";
  const message = t(`boundary.${kind}.message`);
  const heading = t(`boundary.${kind}.heading`);
  // A refused form (too large, another type) was the visitor's own: the way back to it.
  const back = kind === "tooLarge" || kind === "unsupported" ? formPathOf(location.pathname) : null;
  // Route meta does not run for a page the boundary replaced: the <title> is rendered here.
  return (
    <main>
      <PageTitle page={heading} />
      <section className="card">
        <h1>{heading}</h1>
        <p>{message}</p>
        {back ? (
          <p>
            <a className="button inline" href={back}>
              {t("boundary.backToForm")}
            </a>
          </p>
        ) : null}
        <p>
          <a href="/">{t("common.homeLink")}</a>
        </p>
      </section>
    </main>
  );
}
