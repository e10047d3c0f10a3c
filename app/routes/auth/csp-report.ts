import { badRequest, cspReportResponse } from "~/auth/core";
import type { Route } from "./+types/csp-report";

export const loader = () => badRequest();
export const action = ({ request }: Route.ActionArgs) =>
  request.method === "POST" ? cspReportResponse(request) : badRequest();
