import { badRequest } from "~/auth/core";
import { providerFlow } from "~/auth/signin";
import type { Route } from "./+types/callback";

export const loader = ({ request, params }: Route.LoaderArgs) => providerFlow(request, params.provider, "callback");
export const action = ({ request, params }: Route.ActionArgs) =>
  request.method === "POST" ? providerFlow(request, params.provider, "callback") : badRequest();
