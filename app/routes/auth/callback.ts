import { badRequest } from "~/auth/core/respond.server";
import { providerFlow } from "~/auth/signin.server";
import type { Route } from "./+types/callback";

export const loader = ({ request, params }: Route.LoaderArgs) => providerFlow(request, params.provider, "callback");
export const action = ({ request, params }: Route.ActionArgs) =>
  request.method === "POST" ? providerFlow(request, params.provider, "callback") : badRequest();
