import type { Route } from "./+types/sso-oidc-callback";
import { ssoOidcCallback } from "./sso.server";

// GET /sso/oidc/<connectionId>/callback: the IdP's answer (docs/features/oidc-connections.md). Only a GET: the connection asks for no form_post.
export const loader = ({ request, params }: Route.LoaderArgs) => ssoOidcCallback(request, params.id);
