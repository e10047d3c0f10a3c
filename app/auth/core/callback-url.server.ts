// Callback URL rules: a relative path or an absolute http(s) URL on the app's own
// origin; anything else becomes the origin's root. The cookie copy is checked again on use.
import { serializeCookie } from "./cookies.server";
import type { AuthRequest } from "./request.server";

const MAX_LENGTH = 2048;

/**
 * The page a request is for, as a way back: React Router's data twin of a page (`/x.data`,
 * `/_root.data`) and its `_routes` and `index` parameters are requests of the page's script, never
 * a page to land on. The one place that builds such a way back (the sign-in redirect of
 * requireSession, the re-authentication links, the second-factor gate).
 */
export function pageOfRequest(url: URL): string {
  const path = url.pathname === "/_root.data" ? "/" : url.pathname.replace(/\.data$/, "");
  // The page's own parameters stay as the page had them (re-encoding would turn a nested
  // callbackUrl's "%2F" into "%252F"); only React Router's own are dropped.
  const query = url.search
    .slice(1)
    .split("&")
    .filter((part) => {
      if (!part) return false;
      const key = part.split("=", 1)[0]!;
      let name: string;
      try {
        name = decodeURIComponent(key.replace(/\+/g, " "));
      } catch {
        return true;
      }
      return name !== "_routes" && name !== "index";
    })
    .join("&");
  return query ? `${path}?${query}` : path;
}

/** The absolute URL `value` stands for when it is allowed, else null. */
export function validateCallbackUrl(value: unknown, origin: string): string | null {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_LENGTH) return null;
  // Browsers drop tabs and newlines inside URLs, which turns "/\t/evil.example" into
  // "//evil.example"; reject control characters outright instead of relying on that.
  if (/[\u0000-\u001f\u007f]/.test(value)) return null;
  let url: URL;
  if (value.startsWith("/")) {
    if (value.startsWith("//") || value.startsWith("/\\")) return null;
    url = new URL(value, origin);
  } else {
    try {
      url = new URL(value);
    } catch {
      return null;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  }
  if (url.origin !== origin || url.username || url.password) return null;
  // "/.//evil.example" parses to the path "//evil.example", which a browser given the relative
  // form (links, hidden fields) reads as another host.
  if (url.pathname.startsWith("//") || url.pathname.startsWith("/\\")) return null;
  // A way back given in a link or a form (callbackUrl, next, returnTo) is a page too: a crafted
  // `/x.data?_routes=…` would land the visitor on the page's raw data.
  return new URL(pageOfRequest(url) + url.hash, origin).href;
}

/** The path + query + hash of an absolute same-origin URL, for display and for in-app links. */
export function toRelative(absolute: string): string {
  const u = new URL(absolute);
  // Never emit a protocol-relative reference, whatever the caller validated.
  return u.pathname.replace(/^[/\\]+/, "/") + u.search + u.hash;
}

/**
 * The callback URL of this request: body, then query, then cookie; invalid or missing → "/".
 * Sets the cookie when an explicit value differs from the stored one.
 */
export function resolveCallbackUrl(
  ar: AuthRequest,
  body?: Record<string, unknown>,
): { url: string; setCookie: string | null } {
  const fromBody = body?.callbackUrl;
  const explicit =
    fromBody !== undefined && fromBody !== "" ? fromBody : (ar.url.searchParams.get("callbackUrl") || undefined);
  const stored = ar.cookies.get(ar.names.callbackUrl);
  // The first value present decides; an invalid one is replaced, never skipped in favour of the next.
  const url = validateCallbackUrl(explicit ?? stored, ar.origin) ?? `${ar.origin}/`;
  const setCookie =
    explicit !== undefined && url !== stored ? serializeCookie(ar.names.callbackUrl, url, { secure: ar.secure }) : null;
  return { url, setCookie };
}
