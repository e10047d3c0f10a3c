import { data } from "react-router";
import { InvitationCard } from "~/components/organizations";
import type { Route } from "./+types/orgs-invitation";
import { invitationAction, invitationPage, noStore, orgsJsonMiddleware } from "./orgs.server";

// /orgs/invitation?token=…: an invitation's link. Accepting needs the signed-in account whose
// verified address was invited (docs/features/organizations.md); a visitor signs in first.
export const middleware: Route.MiddlewareFunction[] = [orgsJsonMiddleware((request) => invitationPage(request), (request) => invitationAction(request))];

export const meta: Route.MetaFunction = () => [{ name: "robots", content: "noindex" }];

export async function loader({ request }: Route.LoaderArgs) {
  const page = await invitationPage(request);
  return data(page.data, { status: page.status, headers: page.headers });
}

export const action = ({ request }: Route.ActionArgs) => invitationAction(request);

export function headers({ parentHeaders }: Route.HeadersArgs) {
  // The page holds a live token: never cached (the root's Referrer-Policy keeps its URL from other sites).
  return noStore(parentHeaders);
}

export default function Invitation({ loaderData, actionData }: Route.ComponentProps) {
  return <InvitationCard data={loaderData} actionData={actionData as { formError?: string } | undefined} />;
}
