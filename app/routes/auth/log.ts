import { badRequest, clientLogResponse } from "~/auth/core";
import type { Route } from "./+types/log";

export const loader = () => badRequest();
export const action = ({ request }: Route.ActionArgs) =>
  request.method === "POST" ? clientLogResponse(request) : badRequest();
