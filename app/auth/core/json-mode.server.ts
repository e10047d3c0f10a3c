// /auth/signin and /auth/signout are pages (GET) whose POST is also an Auth.js API call. A
// client in JSON-redirect mode must get `200 {url}`, not the page React would render around the
// action's answer, so route middleware answers those POSTs before rendering starts.
//
// Telling needs the body (`json=true`). The middleware reads it through readBody, the one
// size-limited reader, which keeps the parsed body for the Request: the action that runs next
// gets the same body without a second read (docs/decisions/024-body-reader.md).
import { readBody } from "./body.server";
import { wantsJsonRedirect } from "./respond.server";

async function isJsonRedirectPost(request: Request): Promise<boolean> {
  if (request.method.toUpperCase() !== "POST") return false;
  if (wantsJsonRedirect(request)) return true;
  try {
    return wantsJsonRedirect(request, await readBody(request));
  } catch {
    // A refused body (too large, another type, malformed) is the action's to answer: it reads
    // the same refusal.
    return false;
  }
}

export function jsonRedirectMiddleware(handler: (request: Request) => Promise<Response>) {
  return async ({ request }: { request: Request }, next: () => Promise<Response>): Promise<Response> =>
    (await isJsonRedirectPost(request)) ? handler(request) : next();
}
