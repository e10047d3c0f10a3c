import type { Route } from "./+types/sso-metadata";
import { ssoMetadata } from "./sso.server";

// GET /sso/<connectionId>/metadata: the service provider's SAML metadata (docs/features/saml.md).
export const loader = ({ request, params }: Route.LoaderArgs) => ssoMetadata(request, params.id);
