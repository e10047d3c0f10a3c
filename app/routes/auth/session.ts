import { sessionUpdateResponse } from "~/auth/accounts";
import { badRequest, sessionResponse } from "~/auth/core";
import type { Route } from "./+types/session";

export const loader = ({ request }: Route.LoaderArgs) => sessionResponse(request);
export const action = ({ request }: Route.ActionArgs) =>
  request.method === "POST" ? sessionUpdateResponse(request) : badRequest();
