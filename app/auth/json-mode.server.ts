// /auth/signin and /auth/signout are pages (GET) whose POST is also an Auth.js API call. A
// client in JSON-redirect mode must get `200 {url}`, not the page React would render around the
// action's answer, so route middleware answers those POSTs before rendering starts.
import { DEFAULT_BODY_LIMIT } from "./body.server";
import { wantsJsonRedirect } from "./respond.server";

async function isJsonRedirectPost(request: Request): Promise<boolean> {
  if (request.method.toUpperCase() !== "POST") return false;
  if (wantsJsonRedirect(request)) return true;
  const type = (request.headers.get("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json" && type !== "application/x-www-form-urlencoded") return false;
  const declared = Number(request.headers.get("Content-Length") ?? "0");
  // A body too large to be a sign-in form is left to the action, which refuses it.
  if (declared > DEFAULT_BODY_LIMIT) return false;
  const text = await request.clone().text();
  if (type === "application/x-www-form-urlencoded") return new URLSearchParams(text).get("json") === "true";
  try {
    const body = JSON.parse(text);
    return wantsJsonRedirect(request, body && typeof body === "object" ? body : undefined);
  } catch {
    return false;
  }
}

export function jsonRedirectMiddleware(handler: (request: Request) => Promise<Response>) {
  return async ({ request }: { request: Request }, next: () => Promise<Response>): Promise<Response> =>
    (await isJsonRedirectPost(request)) ? handler(request) : next();
}
