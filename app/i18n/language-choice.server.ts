// POST /language: the language menu's form. A plain form, so it works
// without JavaScript: `lang` must be a supported language (else 400, nothing set), `returnTo` the
// path of the page the menu was on — a same-origin path only, never another site (anything else
// returns to the home page). The cookie lasts a year; it is no secret and guards nothing, so the
// form carries no CSRF token; the root middleware still refuses a POST from another site, so no
// other site can change a visitor's language behind their back. docs/decisions/070-languages.md
// A signed-in user with a recent sign-in also keeps the choice on their account: the language of
// every e-mail to them (./user-locale.server.ts, ADR 108). An older session changes the page
// only: a copy of someone's session cookie must not switch their alerts into another language.
import { toRelative, validateCallbackUrl } from "../auth/core/callback-url.server";
import { LANGUAGE_COOKIE, serializeCookie } from "../auth/core/cookies.server";
import { getConfig } from "../auth/core/config.server";
import { authRequest } from "../auth/core/request.server";
import { readBody } from "../auth/core/body.server";
import { badRequest } from "../auth/core/respond.server";
import { log } from "../auth/core/log.server";
import { isRecentAuth } from "../auth/core/recent-auth.server";
import { getSession } from "../auth/core/session.server";
import { isLocale } from "./languages.server";
import { rememberLocale } from "./user-locale.server";

const ONE_YEAR = 365 * 24 * 60 * 60;

/** The path to go back to: a same-origin path (query kept), else "/". */
export function returnPath(value: unknown, origin: string): string {
  if (typeof value !== "string" || !value.startsWith("/")) return "/";
  const url = validateCallbackUrl(value, origin);
  return url ? toRelative(url) : "/";
}

export async function chooseLanguage(request: Request): Promise<Response> {
  const ar = authRequest(request, getConfig());
  let body: Record<string, unknown>;
  try {
    body = await readBody(request);
  } catch {
    return badRequest();
  }
  if (!isLocale(body.lang)) return badRequest();
  try {
    const { session } = await getSession(ar, { roll: false });
    if (session && (await isRecentAuth(ar, session))) await rememberLocale(session.userId, body.lang);
  } catch (error) {
    // The page's language never waits for the database: the choice is still the cookie's.
    log("warn", "language-not-kept", { error });
  }
  return new Response(null, {
    status: 303,
    headers: {
      Location: returnPath(body.returnTo, ar.origin),
      "Set-Cookie": serializeCookie(LANGUAGE_COOKIE, body.lang, { secure: ar.secure, maxAge: ONE_YEAR }),
      "Cache-Control": "no-store",
    },
  });
}
