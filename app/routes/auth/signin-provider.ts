import { badRequest } from "~/auth/core";
import { providerFlow, providerSigninGet } from "~/auth/signin";
import type { Route } from "./+types/signin-provider";

// GET /auth/signin/<id> is not part of the protocol (sign-in starts with a CSRF-checked POST):
// a reload or a bookmark goes to the sign-in page.
export const loader = ({ request }: Route.LoaderArgs) => providerSigninGet(request);
export const action = ({ request, params }: Route.ActionArgs) =>
  request.method === "POST" ? providerFlow(request, params.provider, "signIn") : badRequest();
