// The real IdP for integration tests: app/dev/idp.server.ts (oidc-provider) on a free loopback
// port, configured as provider `oidc`, plus a small user agent that walks its login page over
// HTTP the way a browser would (cookie jar, redirects, the login form, the form_post page).
import { resetConfig } from "../../app/auth/core/config.server.ts";
import { clearOAuthCaches } from "../../app/auth/oauth/http.server.ts";
import { startDevIdp, type IdpOptions, type IdpUser, type RunningIdp } from "../../app/dev/idp.server.ts";
import { CookieJar } from "./http.ts";

export const TEST_CLIENT = { clientId: "vestibule-test", clientSecret: "vestibule-test-secret-0123456789" };

export const ALICE: IdpUser = { sub: "idp-alice", email: "alice@example.com", emailVerified: true, name: "Alice Example", password: "alice-password" };
export const BOB: IdpUser = { sub: "idp-bob", email: "bob@example.com", emailVerified: false, name: "Bob Unverified", password: "bob-password" };

export type TestIdp = RunningIdp & {
  /** Sets AUTH_OIDC_* to this IdP (plus `env`) and reloads the configuration. */
  configure(env?: Record<string, string>): void;
};

export async function startTestIdp(options: IdpOptions = {}): Promise<TestIdp> {
  const idp = await startDevIdp({ host: "127.0.0.1", clients: [TEST_CLIENT], users: [ALICE, BOB], ...options });
  return {
    ...idp,
    configure(env = {}) {
      process.env.AUTH_OIDC_ISSUER = idp.issuer;
      process.env.AUTH_OIDC_ID = TEST_CLIENT.clientId;
      process.env.AUTH_OIDC_SECRET = TEST_CLIENT.clientSecret;
      process.env.AUTH_OIDC_NAME = "Test IdP";
      for (const [k, v] of Object.entries(env)) process.env[k] = v;
      clearOAuthCaches();
      resetConfig();
    },
  };
}

/** Where the IdP sent the browser back: a redirect (`url`) or a form_post page (`form`). */
export type IdpAnswer =
  | { kind: "redirect"; url: string }
  | { kind: "form_post"; action: string; fields: Record<string, string> };

/** Stops following redirects when they leave the IdP (the app's callback). */
function leavesIdp(location: string, issuer: string) {
  return new URL(location, issuer).origin !== new URL(issuer).origin;
}

/**
 * A browser's visit to the IdP: follows the authorization URL, signs in with `as` (or cancels
 * with "cancel") when the login page appears, and returns how the IdP answers the app.
 */
export async function visitIdp(
  authorizationUrl: string,
  as: { email: string; password: string } | "cancel",
  jar = new CookieJar(),
): Promise<IdpAnswer> {
  const issuer = new URL(authorizationUrl).origin;
  let next: { url: string; method: "GET" | "POST"; body?: URLSearchParams } = { url: authorizationUrl, method: "GET" };
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next.url, {
      method: next.method,
      redirect: "manual",
      headers: {
        Cookie: jar.header(),
        ...(next.body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
      },
      body: next.body,
    });
    jar.apply(res);
    const location = res.headers.get("Location");
    if (res.status >= 300 && res.status < 400 && location) {
      const target = new URL(location, next.url).href;
      if (leavesIdp(target, issuer)) return { kind: "redirect", url: target };
      next = { url: target, method: "GET" };
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`IdP answered ${res.status} at ${next.url}: ${html.slice(0, 300)}`);
    const formPost = parseAutoSubmitForm(html);
    if (formPost) return formPost;
    const login = /action="(\/interaction\/[\w-]+)\/login"/.exec(html);
    if (!login) throw new Error(`unexpected IdP page at ${next.url}: ${html.slice(0, 300)}`);
    const uidPath = login[1]!;
    if (as === "cancel") next = { url: new URL(`${uidPath}/abort`, issuer).href, method: "POST", body: new URLSearchParams() };
    else next = { url: new URL(`${uidPath}/login`, issuer).href, method: "POST", body: new URLSearchParams(as) };
  }
  throw new Error("too many redirects at the IdP");
}

/** oidc-provider's form_post page: a form that posts code/state/iss to the redirect URI. */
function parseAutoSubmitForm(html: string): IdpAnswer | null {
  const form = /<form[^>]*method="post"[^>]*action="([^"]+)"/i.exec(html);
  if (!form || form[1]!.includes("/interaction/")) return null;
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/gi)) {
    fields[m[1]!] = decodeEntities(m[2]!);
  }
  return { kind: "form_post", action: decodeEntities(form[1]!), fields };
}

function decodeEntities(s: string) {
  return s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, "&").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">");
}
