import { badRequest } from "~/auth/core";
import { providerFlow } from "~/auth/signin";
import type { Route } from "./+types/signin-provider";

// GET /auth/signin/<id> is not part of the protocol: sign-in starts with a CSRF-checked POST.
export const loader = () => badRequest();
export const action = ({ request, params }: Route.ActionArgs) =>
  request.method === "POST" ? providerFlow(request, params.provider, "signIn") : badRequest();
