import type { Route } from "./+types/sso-finish";
import { ssoFinish } from "./sso.server";

// GET /sso/<connectionId>/finish?ticket=…: where the ACS sends the browser; signs in only the
// browser that started the sign-in (docs/features/saml.md, ADR 154, amended).
export const loader = ({ request, params }: Route.LoaderArgs) => ssoFinish(request, params.id);
