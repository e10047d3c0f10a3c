// The pages the engine itself answers — an error, the device flow's code entry and confirmation,
// RP-initiated logout, the way back to the app — written by Vestibule: in the visitor's language
// (their `lang` cookie, else Accept-Language), plain forms that work without JavaScript, no inline
// script or outside font. They wear the app's shell — its stylesheet, the header with the site's
// name, one card, the same fields and buttons as /auth/signin — so a visitor sent here by an app
// sees the site they signed in to, at 320 px and right to left as every other page.
// The engine's own forms are not used: only their action URL and anti-forgery token are taken.
import type { KoaContextWithOIDC } from "oidc-provider";
import { getConfig } from "../core/config.server";
import { escapeHtml } from "../../html";
import { fromAcceptLanguage, fromLanguageCookie } from "../../i18n/negotiate.server";
import { DEFAULT_LOCALE, directionOf } from "../../i18n/languages.server";
import { runWithLocale, t, type MessageKey } from "../../i18n/t.server";
import type { MessageValues } from "../../i18n/format";
import { pageTitle } from "../../site";
import { findClient } from "./clients.server";
import { PROVIDER_SCOPES } from "./scopes";

// The stylesheet's URL. The engine is also loaded outside Vite (the CLI commands, a test's second
// instance under tsx), where a `?url` import cannot be resolved: the built server's entry, which Vite
// does process, names the hashed asset at start (app/entry.server.tsx); until then, and under the dev
// server, it is the path Vite serves the source at.
let stylesheet = "/app/app.css";

/** Called once by the server entry with the stylesheet's built URL. */
export function setPagesStylesheet(href: string): void {
  stylesheet = href;
}

/**
 * The sentence `key` as HTML, each of `ltr`'s values (a host, an address) isolated left to right
 * as <bdi dir="ltr"> (app/components/ltr.tsx does the same in the React pages, ADR 161).
 */
function sentence(key: MessageKey, ltr: Record<string, string>): string {
  const marks = Object.fromEntries(Object.keys(ltr).map((name, i) => [name, `\u0000${i}\u0000`]));
  let html = escapeHtml(t(key, marks as MessageValues));
  Object.values(ltr).forEach((value, i) => {
    html = html.replaceAll(`\u0000${i}\u0000`, `<bdi dir="ltr" class="ltr">${escapeHtml(value)}</bdi>`);
  });
  return html;
}

/**
 * Writes a page into the engine's answer: the app's shell (stylesheet, header, one card headed by
 * `heading`), its content made by `body`, both in the visitor's language. `headingHtml` when the
 * heading carries a name that reads in its own direction (an app's name, in <bdi>).
 */
function writePage(ctx: KoaContextWithOIDC, heading: () => string, body: () => string, headingHtml?: () => string): void {
  const locale = fromLanguageCookie(ctx.get("cookie")) ?? fromAcceptLanguage(ctx.get("accept-language")) ?? DEFAULT_LOCALE;
  ctx.type = "html";
  ctx.set("Content-Language", locale);
  ctx.set("Cache-Control", "no-store");
  ctx.set("X-Frame-Options", "DENY");
  ctx.body = runWithLocale(locale, () => {
    const title = heading();
    const { siteName } = getConfig();
    return (
      `<!DOCTYPE html><html lang="${locale}" dir="${directionOf(locale)}"><head><meta charset="utf-8">` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(pageTitle(siteName, title))}</title>` +
      `<link rel="stylesheet" href="${escapeHtml(stylesheet)}"><link rel="icon" href="/favicon.ico" sizes="32x32"><link rel="icon" href="/favicon.svg" type="image/svg+xml"></head>` +
      `<body><a class="skip-link" href="#content">${escapeHtml(t("layout.skipToContent"))}</a>` +
      `<header class="site-header"><a href="/" class="brand">${escapeHtml(siteName)}</a></header>` +
      `<div id="content"><main class="auth-page"><section class="card" aria-labelledby="card-title">` +
      `<h1 id="card-title">${headingHtml ? headingHtml() : escapeHtml(title)}</h1>${body()}</section></main></div></body></html>`
    );
  });
}

/** The action and anti-forgery token of a form the engine built. */
function formParts(form: string): { action: string; xsrf: string } {
  const action = /action="([^"]*)"/.exec(form)?.[1] ?? "";
  const xsrf = /name="xsrf" value="([^"]*)"/.exec(form)?.[1] ?? "";
  return { action, xsrf };
}

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

/** An error the engine shows as a page (an unknown client or redirect URI …): never a redirect. */
export async function errorPage(ctx: KoaContextWithOIDC, out: Record<string, unknown>): Promise<void> {
  const code = typeof out.error === "string" ? out.error : "server_error";
  writePage(
    ctx,
    () => t("provider.error.heading"),
    () => `<p class="alert" role="alert">${escapeHtml(t("provider.error.message"))}</p><p class="muted" id="provider-error-code">${sentence("provider.error.code", { code })}</p>`,
  );
}

/** Why /device was shown again after a post: its `?error=` (Post/Redirect/Get). */
const DEVICE_ERRORS = { "wrong-code": "device.wrongCode", aborted: "device.aborted" } as const satisfies Record<string, MessageKey>;

/**
 * /device: the code the device shows, typed here (RFC 8628); after a wrong one, said so. A refused
 * post is answered with a redirect to /device?error=…, so Back and reload never post it again.
 */
export async function userCodeInputPage(ctx: KoaContextWithOIDC, form: string, _out?: unknown, error?: Error & { userCode?: string }): Promise<void> {
  const { action, xsrf } = formParts(form);
  if (error && ctx.method === "POST") {
    ctx.redirect(`${action || "/device"}?error=${error.name === "AbortedError" ? "aborted" : "wrong-code"}`);
    ctx.status = 303;
    return;
  }
  const asked = typeof ctx.query.error === "string" ? ctx.query.error : "";
  const reason = Object.hasOwn(DEVICE_ERRORS, asked) ? DEVICE_ERRORS[asked as keyof typeof DEVICE_ERRORS] : null;
  writePage(
    ctx,
    () => t("device.title"),
    () =>
      `${reason ? `<p class="alert" role="alert" id="device-error">${escapeHtml(t(reason))}</p>` : ""}` +
      `<form method="post" action="${escapeHtml(action)}" id="device-code-form">${hidden("xsrf", xsrf)}` +
      `<div class="field"><label for="device-code">${escapeHtml(t("device.codeLabel"))}</label>` +
      // The code is machine text: typed left to right, from the left edge, in any language (as the one-time codes).
      `<input id="device-code" name="user_code" type="text" dir="ltr" autocomplete="off" autocapitalize="characters" spellcheck="false" required${reason ? ' aria-invalid="true" aria-describedby="device-error" autofocus' : ""}></div>` +
      `<button type="submit" class="button">${escapeHtml(t("device.continue"))}</button></form>`,
  );
}

/** The device's app and code, to be compared with what the device shows, then Allow or Deny. */
export async function userCodeConfirmPage(ctx: KoaContextWithOIDC, form: string, client: { clientName?: string; clientId: string }, _info: unknown, userCode: string): Promise<void> {
  const { action, xsrf } = formParts(form);
  const fields = hidden("xsrf", xsrf) + hidden("user_code", userCode);
  const app = client.clientName ?? client.clientId;
  // What the device asks for and who vouched for the app, always: a remembered consent asks
  // nothing more after this page, so this page is the user's only look at it (ADR 177).
  const asked = new Set(String((ctx.oidc.entities.DeviceCode as { params?: { scope?: unknown } } | undefined)?.params?.scope ?? "").split(" "));
  const scopes = PROVIDER_SCOPES.filter((s) => asked.has(s));
  const row = await findClient(client.clientId);
  const unverified = !row || row.source === "registration";
  writePage(
    ctx,
    () => t("device.confirmTitle", { app }),
    () =>
      (unverified ? `<p class="alert" role="note" id="device-unverified">${escapeHtml(t("device.unverified"))}</p>` : "") +
      (scopes.length
        ? `<p id="device-asks">${escapeHtml(t("consent.asks"))}</p><ul aria-labelledby="device-asks" id="device-scopes">` +
          scopes.map((s) => `<li data-scope="${s}">${escapeHtml(t(`consent.scope.${s}`))}</li>`).join("") +
          `</ul>`
        : "") +
      `<p>${escapeHtml(t("device.compare"))}</p><p><code id="device-user-code" class="setup-key">${escapeHtml(userCode)}</code></p>` +
      `<form method="post" action="${escapeHtml(action)}" id="device-confirm-form">${fields}${hidden("confirm", "yes")}` +
      `<button type="submit" class="button">${escapeHtml(t("consent.allow"))}</button></form>` +
      `<form method="post" action="${escapeHtml(action)}" id="device-abort-form">${fields}${hidden("abort", "yes")}` +
      `<button type="submit" class="button secondary">${escapeHtml(t("consent.deny"))}</button></form>`,
    // The app's name reads in its own direction inside a sentence of the other.
    () => escapeHtml(t("device.confirmTitle", { app: "\u0000" })).replace("\u0000", `<bdi>${escapeHtml(app)}</bdi>`),
  );
}

export async function deviceSuccessPage(ctx: KoaContextWithOIDC): Promise<void> {
  writePage(
    ctx,
    () => t("device.doneTitle"),
    () => `<p class="notice" role="status">${escapeHtml(t("device.done"))}</p>`,
  );
}

/** The name of whoever registered an app, inside a sentence: its own direction, as text (<bdi>). */
function withName(key: MessageKey, name: string): string {
  return escapeHtml(t(key, { app: "\u0000" })).replace("\u0000", `<bdi>${escapeHtml(name)}</bdi>`);
}

/**
 * RP-initiated logout: asked before signing out, naming the account that would be signed out and
 * the app that asked, when known.
 */
export async function logoutPage(ctx: KoaContextWithOIDC, form: string, who: { email: string | null; app: string | null } = { email: null, app: null }): Promise<void> {
  const { action, xsrf } = formParts(form);
  writePage(
    ctx,
    () => t("provider.logout.title"),
    () =>
      (who.app ? `<p id="provider-logout-app">${withName("provider.logout.askedBy", who.app)}</p>` : "") +
      (who.email ? `<p id="provider-logout-account">${sentence("provider.logout.account", { address: who.email })}</p>` : "") +
      `<form method="post" action="${escapeHtml(action)}" id="provider-logout-form" class="stack">${hidden("xsrf", xsrf)}` +
      `<button type="submit" name="logout" value="yes" id="provider-logout" class="button">${escapeHtml(t("provider.logout.yes"))}</button>` +
      `<button type="submit" id="provider-stay" class="button secondary">${escapeHtml(t("provider.logout.no"))}</button></form>`,
  );
}

/**
 * The way back to the app after a sign-in or consent on Vestibule's pages: a page that goes on by
 * itself (a meta refresh, no script) with a link, instead of a redirect. A browser applies the
 * sign-in or consent form's CSP form-action to every redirect that follows its post, and the app's
 * redirect URI is on no list a page could know beforehand (ADR 136).
 */
export function continueToClientPage(ctx: KoaContextWithOIDC, href: string, host: string): void {
  writePage(
    ctx,
    () => t("provider.continue.title", { host }),
    () =>
      `<p class="notice" role="status">${sentence("provider.continue.message", { host })}</p>` +
      `<p><a href="${escapeHtml(href)}" id="provider-continue" class="button">${sentence("provider.continue.link", { host })}</a></p>`,
    () => sentence("provider.continue.title", { host }),
  );
  // The page carries the code in its link: never cached, never sent on as a Referer.
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.body = String(ctx.body).replace("<head>", `<head><meta http-equiv="refresh" content="0;url=${escapeHtml(href)}">`);
}

export async function logoutDonePage(ctx: KoaContextWithOIDC): Promise<void> {
  writePage(
    ctx,
    () => t("provider.logout.doneTitle"),
    () => `<p class="notice" role="status">${escapeHtml(t("provider.logout.done"))}</p>`,
  );
}

/** /device refused for too many codes from this client (DEVICE_CODE_CLIENT). */
export function deviceTooManyPage(ctx: KoaContextWithOIDC, minutes: number): void {
  writePage(
    ctx,
    () => t("device.title"),
    () => `<p class="alert" role="alert" id="device-error">${escapeHtml(t("device.tooMany", { minutes }))}</p>`,
  );
}
