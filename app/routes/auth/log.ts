import { clientLogResponse } from "~/auth/endpoints.server";
import { badRequest } from "~/auth/core/respond.server";
import type { Route } from "./+types/log";

export const loader = () => badRequest();
export const action = ({ request }: Route.ActionArgs) =>
  request.method === "POST" ? clientLogResponse(request) : badRequest();
