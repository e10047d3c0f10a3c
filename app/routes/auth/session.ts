import { sessionResponse, sessionUpdateResponse } from "~/auth/endpoints.server";
import { badRequest } from "~/auth/core/respond.server";
import type { Route } from "./+types/session";

export const loader = ({ request }: Route.LoaderArgs) => sessionResponse(request);
export const action = ({ request }: Route.ActionArgs) =>
  request.method === "POST" ? sessionUpdateResponse(request) : badRequest();
