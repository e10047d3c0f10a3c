import { data } from "react-router";
import type { Route } from "./+types/sso-acs";
import { ssoAcs } from "./sso.server";

// POST /sso/<connectionId>/acs: the assertion consumer (docs/features/saml.md). Only a POST.
export function loader(): never {
  throw data("Not found", { status: 404 });
}

export const action = ({ request, params }: Route.ActionArgs) => ssoAcs(request, params.id);
