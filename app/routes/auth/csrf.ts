import { badRequest, csrfResponse } from "~/auth/core";
import type { Route } from "./+types/csrf";

export const loader = ({ request }: Route.LoaderArgs) => csrfResponse(request);
export const action = () => badRequest();
