// The browser's side of an SP-initiated SAML sign-in against the app in process (ADR 154 amended):
// the start that sets the binding cookie, and the 303 from the ACS to the finish step followed in
// the browser that started it. Apart from idp.ts, which stays free of the app (the browser tests
// use it against a running server).
import { CookieJar, get } from "../../support/http.ts";
import { send } from "../organizations/helpers.ts";
import { requestIdOf } from "./idp.ts";

/**
 * The browser of an SP-initiated sign-in (ADR 154, amended). samlStart keeps the binding cookie the start
 * sets in `jar`; finishInBrowser follows the ACS's 303 to the finish step in the jar of the
 * request it answers (the last one started, unless given) — the step a real browser takes.
 */
let lastBrowser: CookieJar | null = null;
export async function samlStart(connectionId: string, jar = new CookieJar(), callbackUrl = "/account"): Promise<{ id: string; jar: CookieJar; res: Response }> {
  const res = await send(get(`/sso/${connectionId}/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`, { jar }), jar);
  lastBrowser = jar;
  return { id: res.status === 302 ? requestIdOf(res.headers.get("Location")!) : "", jar, res };
}
export async function finishInBrowser(res: Response, jar: CookieJar | null = lastBrowser): Promise<Response> {
  if (res.status !== 303) return res;
  const location = new URL(res.headers.get("Location")!);
  return send(get(`${location.pathname}${location.search}`, { jar: jar ?? undefined, headers: { Accept: "text/html" } }), jar ?? undefined);
}
