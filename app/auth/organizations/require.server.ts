// requireOrganization for app routes (docs/features/organizations.md, ADR 148): the signed-in user,
// their session and the session's active organization with their membership, or a thrown Response.
//
//   export async function loader({ request }: Route.LoaderArgs) {
//     const { user, organization, membership, headers } = await requireOrganization(request, { role: "admin" });
//     return data({ projects: await projectsOf(organization.id) }, { headers });
//   }
//
// Signed out: requireSession's sign-in redirect (a JSON client: `401 {"error":"SessionRequired","url"}`). No active organization (none chosen, or the user
// was removed from it — checked on this very request): a page goes to /orgs to choose one and come
// back; a JSON client gets `403 {"error":"OrganizationRequired","url"}`. A role below `role`: `403
// {"error":"Forbidden"}` (JSON) or the 403 page. Organizations off: 404.
import { db } from "../../db/client.server";
import { pageOfRequest, toRelative, validateCallbackUrl } from "../core/callback-url.server";
import { getConfig } from "../core/config.server";
import { FORBIDDEN, headersWith, requireSession } from "../core/page-session.server";
import { jsonResponse, redirectResponse, wantsJsonRedirect } from "../core/respond.server";
import type { CurrentSession } from "../core/session.server";
import { activeOrganization } from "./active.server";
import { atLeast, type OrgRole } from "./roles";

export const ORGANIZATION_REQUIRED = "OrganizationRequired";
export const ORGANIZATIONS_PATH = "/orgs";

export type RequiredOrganization = {
  user: { id: string; name: string | null; email: string | null; image: string | null };
  session: CurrentSession;
  organization: { id: string; slug: string; name: string; role: OrgRole };
  membership: { id: string; role: OrgRole };
  headers: Headers;
};

/** A JSON client rather than a browser's page: it asked for JSON, or for JSON-redirect answers. */
function wantsJson(request: Request): boolean {
  const accept = request.headers.get("Accept") ?? "";
  return wantsJsonRedirect(request) || (accept.includes("application/json") && !accept.includes("text/html"));
}

export async function requireOrganization(request: Request, { role }: { role?: OrgRole } = {}): Promise<RequiredOrganization> {
  if (!getConfig().organizations) throw new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } });
  const json = wantsJson(request);
  const { ar, session, setCookies } = await requireSession(request).catch((thrown: unknown) => {
    // A JSON client is told to sign in, not sent to a page: 401 {"error":"SessionRequired","url"}.
    const location = json && thrown instanceof Response ? thrown.headers.get("Location") : null;
    if (location) throw jsonResponse({ error: "SessionRequired", url: new URL(location, request.url).href }, { status: 401, noCache: true, setCookies: thrown instanceof Response ? thrown.headers.getSetCookie() : [] });
    throw thrown;
  });
  const headers = headersWith(setCookies);
  const active = await activeOrganization(session);
  if (!active) {
    const here = validateCallbackUrl(pageOfRequest(ar.url), ar.origin);
    const url = `${ar.origin}${ORGANIZATIONS_PATH}${here ? `?${new URLSearchParams({ callbackUrl: toRelative(here) })}` : ""}`;
    if (json) throw jsonResponse({ error: ORGANIZATION_REQUIRED, url }, { status: 403, noCache: true, setCookies });
    throw redirectResponse(url, { setCookies });
  }
  if (role && !atLeast(active.role, role)) {
    if (json) throw jsonResponse({ error: FORBIDDEN }, { status: 403, noCache: true, setCookies });
    headers.set("Content-Type", "text/plain; charset=utf-8");
    throw new Response("Forbidden", { status: 403, headers });
  }
  const user = await db().user.findUnique({ where: { id: session.userId }, select: { id: true, name: true, email: true, image: true } });
  if (!user) throw redirectResponse(`${ar.config.basePath}/signin?error=SessionRequired`, { setCookies });
  return {
    user,
    session,
    organization: { id: active.id, slug: active.slug, name: active.name, role: active.role },
    membership: { id: active.membershipId, role: active.role },
    headers,
  };
}
