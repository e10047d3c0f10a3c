import { csrfResponse } from "~/auth/endpoints.server";
import { badRequest } from "~/auth/core/respond.server";
import type { Route } from "./+types/csrf";

export const loader = ({ request }: Route.LoaderArgs) => csrfResponse(request);
export const action = () => badRequest();
