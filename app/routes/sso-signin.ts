import type { Route } from "./+types/sso-signin";
import { ssoStart } from "./sso.server";

// GET /sso/<connectionId>/signin?callbackUrl=…: SP-initiated SAML sign-in (docs/features/saml.md).
export const loader = ({ request, params }: Route.LoaderArgs) => ssoStart(request, params.id);
