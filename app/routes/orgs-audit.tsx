import { data } from "react-router";
import { OrganizationAudit } from "~/components/organizations";
import type { Route } from "./+types/orgs-audit";
import { auditDownloadMiddleware, auditPage, noStore, orgsJsonMiddleware } from "./orgs.server";

// /orgs/<slug>/audit: the organization's audit log, paged; ?format=json and ?format=csv download
// all of it (docs/features/organizations.md). Admins and owners only; a non-member gets 404.
export const middleware: Route.MiddlewareFunction[] = [auditDownloadMiddleware, orgsJsonMiddleware((request, params) => auditPage(request, params.slug), null)];

export async function loader({ request, params }: Route.LoaderArgs) {
  const page = await auditPage(request, params.slug);
  return data(page.data, { headers: page.headers });
}

export function headers({ parentHeaders }: Route.HeadersArgs) {
  return noStore(parentHeaders);
}

export default function OrganizationAuditPage({ loaderData }: Route.ComponentProps) {
  return <OrganizationAudit data={loaderData} />;
}
