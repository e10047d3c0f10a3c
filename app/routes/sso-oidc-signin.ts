import type { Route } from "./+types/sso-oidc-signin";
import { ssoOidcStart } from "./sso.server";

// GET /sso/oidc/<connectionId>/signin?callbackUrl=…: sign-in through an organization's OpenID Connect connection (docs/features/oidc-connections.md).
export const loader = ({ request, params }: Route.LoaderArgs) => ssoOidcStart(request, params.id);
