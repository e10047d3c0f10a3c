import { handleScim } from "~/auth/organizations/scim/handler.server";
import type { Route } from "./+types/scim";

// SCIM 2.0 provisioning (docs/features/scim.md): every method of every /scim/v2 URL.
export const loader = ({ request, params }: Route.LoaderArgs) => handleScim(request, params["*"] ?? "");
export const action = ({ request, params }: Route.ActionArgs) => handleScim(request, params["*"] ?? "");
