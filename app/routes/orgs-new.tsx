import { data } from "react-router";
import { NewOrganization } from "~/components/organizations";
import type { Route } from "./+types/orgs-new";
import { createAction, newOrgPage, noStore, orgsJsonMiddleware } from "./orgs.server";

// /orgs/new: create an organization; its creator is its owner (docs/features/organizations.md).
export const middleware: Route.MiddlewareFunction[] = [orgsJsonMiddleware((request) => newOrgPage(request), (request) => createAction(request))];

export async function loader({ request }: Route.LoaderArgs) {
  const page = await newOrgPage(request);
  return data(page.data, { headers: page.headers });
}

export const action = ({ request }: Route.ActionArgs) => createAction(request);

export function headers({ parentHeaders }: Route.HeadersArgs) {
  return noStore(parentHeaders);
}

export default function NewOrganizationPage({ loaderData, actionData }: Route.ComponentProps) {
  return <NewOrganization data={loaderData} actionData={actionData as { formError?: string; reauthUrl?: string } | undefined} />;
}
