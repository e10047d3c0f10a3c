import { data } from "react-router";
import { OrganizationList } from "~/components/organizations";
import type { Route } from "./+types/orgs";
import { noStore, orgListPage, orgsJsonMiddleware } from "./orgs.server";

// /orgs: the organizations I belong to, and the switch of the session's active one
// (docs/features/organizations.md).
export const middleware: Route.MiddlewareFunction[] = [orgsJsonMiddleware((request) => orgListPage(request), null)];

export async function loader({ request }: Route.LoaderArgs) {
  const page = await orgListPage(request);
  return data(page.data, { headers: page.headers });
}

export function headers({ parentHeaders }: Route.HeadersArgs) {
  return noStore(parentHeaders);
}

export default function Organizations({ loaderData }: Route.ComponentProps) {
  return <OrganizationList data={loaderData} />;
}
