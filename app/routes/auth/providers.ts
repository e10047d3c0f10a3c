import { badRequest } from "~/auth/core";
import { providersResponse } from "~/auth/signin";
import type { Route } from "./+types/providers";

export const loader = ({ request }: Route.LoaderArgs) => providersResponse(request);
export const action = () => badRequest();
