import { badRequest } from "~/auth/core";
import { webauthnOptionsFlow } from "~/auth/signin";
import type { Route } from "./+types/webauthn-options";

export const loader = ({ request, params }: Route.LoaderArgs) => webauthnOptionsFlow(request, params.provider);
export const action = () => badRequest();
