// The pages the engine itself answers — an error, the device flow's code entry and confirmation,
// RP-initiated logout — written by Vestibule: in the visitor's language (their `lang` cookie, else
// Accept-Language), plain forms that work without JavaScript, no inline script or outside font.
// The engine's own forms are not used: only their action URL and anti-forgery token are taken.
import type { KoaContextWithOIDC } from "oidc-provider";
import { getConfig } from "../core/config.server";
import { escapeHtml } from "../../html";
import { fromAcceptLanguage, fromLanguageCookie } from "../../i18n/negotiate.server";
import { DEFAULT_LOCALE, directionOf } from "../../i18n/languages.server";
import { runWithLocale, t } from "../../i18n/t.server";
import { pageTitle } from "../../site";

/** Writes a page into the engine's answer, its text made by `body` in the visitor's language. */
function writePage(ctx: KoaContextWithOIDC, heading: () => string, body: () => string): void {
  const locale = fromLanguageCookie(ctx.get("cookie")) ?? fromAcceptLanguage(ctx.get("accept-language")) ?? DEFAULT_LOCALE;
  ctx.type = "html";
  ctx.set("Content-Language", locale);
  ctx.set("Cache-Control", "no-store");
  ctx.set("X-Frame-Options", "DENY");
  ctx.body = runWithLocale(locale, () => {
    const title = heading();
    return (
      `<!DOCTYPE html><html lang="${locale}" dir="${directionOf(locale)}"><head><meta charset="utf-8">` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(pageTitle(getConfig().siteName, title))}</title></head>` +
      `<body><main><h1>${escapeHtml(title)}</h1>${body()}</main></body></html>`
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
    () => `<p role="alert">${escapeHtml(t("provider.error.message"))}</p><p><code>${escapeHtml(code)}</code></p>`,
  );
}

/** /device: the code the device shows, typed here (RFC 8628); after a wrong one, said so. */
export async function userCodeInputPage(ctx: KoaContextWithOIDC, form: string, _out?: unknown, error?: Error & { userCode?: string }): Promise<void> {
  const { action, xsrf } = formParts(form);
  writePage(
    ctx,
    () => t("device.title"),
    () =>
      `${error ? `<p role="alert" id="device-error">${escapeHtml(t(error.name === "AbortedError" ? "device.aborted" : "device.wrongCode"))}</p>` : ""}` +
      `<form method="post" action="${escapeHtml(action)}" id="device-code-form">${hidden("xsrf", xsrf)}` +
      `<label for="device-code">${escapeHtml(t("device.codeLabel"))}</label>` +
      `<input id="device-code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" required>` +
      `<button type="submit">${escapeHtml(t("device.continue"))}</button></form>`,
  );
}

/** The device's app and code, to be compared with what the device shows, then Allow or Deny. */
export async function userCodeConfirmPage(ctx: KoaContextWithOIDC, form: string, client: { clientName?: string; clientId: string }, _info: unknown, userCode: string): Promise<void> {
  const { action, xsrf } = formParts(form);
  const fields = hidden("xsrf", xsrf) + hidden("user_code", userCode);
  writePage(
    ctx,
    () => t("device.confirmTitle", { app: client.clientName ?? client.clientId }),
    () =>
      `<p>${escapeHtml(t("device.compare"))}</p><p><code id="device-user-code">${escapeHtml(userCode)}</code></p>` +
      `<form method="post" action="${escapeHtml(action)}" id="device-confirm-form">${fields}${hidden("confirm", "yes")}` +
      `<button type="submit">${escapeHtml(t("consent.allow"))}</button></form>` +
      `<form method="post" action="${escapeHtml(action)}" id="device-abort-form">${fields}${hidden("abort", "yes")}` +
      `<button type="submit">${escapeHtml(t("consent.deny"))}</button></form>`,
  );
}

export async function deviceSuccessPage(ctx: KoaContextWithOIDC): Promise<void> {
  writePage(
    ctx,
    () => t("device.doneTitle"),
    () => `<p role="status">${escapeHtml(t("device.done"))}</p>`,
  );
}

/** RP-initiated logout: asked before signing out. */
export async function logoutPage(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  const { action, xsrf } = formParts(form);
  writePage(
    ctx,
    () => t("provider.logout.title"),
    () =>
      `<form method="post" action="${escapeHtml(action)}" id="provider-logout-form">${hidden("xsrf", xsrf)}` +
      `<button type="submit" name="logout" value="yes" id="provider-logout">${escapeHtml(t("provider.logout.yes"))}</button>` +
      `<button type="submit" id="provider-stay">${escapeHtml(t("provider.logout.no"))}</button></form>`,
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
    () => `<p role="status">${escapeHtml(t("provider.continue.message", { host }))}</p><p><a href="${escapeHtml(href)}" id="provider-continue">${escapeHtml(t("provider.continue.link", { host }))}</a></p>`,
  );
  // The page carries the code in its link: never cached, never sent on as a Referer.
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.body = String(ctx.body).replace("<head>", `<head><meta http-equiv="refresh" content="0;url=${escapeHtml(href)}">`);
}

export async function logoutDonePage(ctx: KoaContextWithOIDC): Promise<void> {
  writePage(
    ctx,
    () => t("provider.logout.doneTitle"),
    () => `<p role="status">${escapeHtml(t("provider.logout.done"))}</p>`,
  );
}

/** /device refused for too many codes from this client (DEVICE_CODE_CLIENT). */
export function deviceTooManyPage(ctx: KoaContextWithOIDC, minutes: number): void {
  writePage(
    ctx,
    () => t("device.title"),
    () => `<p role="alert" id="device-error">${escapeHtml(t("device.tooMany", { minutes }))}</p>`,
  );
}
