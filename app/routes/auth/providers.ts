import { providersResponse } from "~/auth/endpoints.server";
import { badRequest } from "~/auth/core/respond.server";
import type { Route } from "./+types/providers";

export const loader = ({ request }: Route.LoaderArgs) => providersResponse(request);
export const action = () => badRequest();
