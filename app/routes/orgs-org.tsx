import { data } from "react-router";
import { OrganizationPage } from "~/components/organizations";
import type { Route } from "./+types/orgs-org";
import { noStore, orgAction, orgPage, orgsJsonMiddleware } from "./orgs.server";

// /orgs/<slug>: one organization — members, invitations, domains, settings — and every change to
// it as an intent of this page's forms (docs/features/organizations.md). A non-member gets 404.
export const middleware: Route.MiddlewareFunction[] = [orgsJsonMiddleware((request, params) => orgPage(request, params.slug), (request, params) => orgAction(request, params.slug))];

export async function loader({ request, params }: Route.LoaderArgs) {
  const page = await orgPage(request, params.slug);
  return data(page.data, { headers: page.headers });
}

export const action = ({ request, params }: Route.ActionArgs) => orgAction(request, params.slug);

export function headers({ parentHeaders }: Route.HeadersArgs) {
  return noStore(parentHeaders);
}

export default function Organization({ loaderData, actionData }: Route.ComponentProps) {
  return <OrganizationPage data={loaderData} actionData={actionData as { formError?: string; reauthUrl?: string; scimToken?: { name: string; secret: string } } | undefined} />;
}
