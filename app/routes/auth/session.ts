import { sessionUpdateResponse } from "~/auth/accounts";
import { badRequest, sessionResponse } from "~/auth/core";
import { sessionOrganizationField } from "~/auth/organizations";
import type { Route } from "./+types/session";

// /auth/session also names the active organization (docs/features/organizations.md): `organization`
// beside `user` and `expires`, absent when there is none or organizations are off.
export const loader = ({ request }: Route.LoaderArgs) => sessionResponse(request, { extend: sessionOrganizationField });
export const action = ({ request }: Route.ActionArgs) =>
  request.method === "POST" ? sessionUpdateResponse(request) : badRequest();
