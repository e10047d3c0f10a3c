import { apiMeResponse } from "~/auth/provider/example-resources.server";
import type { Route } from "./+types/me";

// GET /api/me: the access token's user (docs/features/mcp.md); 404 unless AUTH_PROVIDER=true.
export const loader = ({ request }: Route.LoaderArgs) => apiMeResponse(request);
export const action = ({ request }: Route.ActionArgs) => apiMeResponse(request);
