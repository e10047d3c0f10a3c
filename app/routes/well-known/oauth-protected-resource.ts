import { protectedResourceMetadataResponse } from "~/auth/provider/protected-resource.server";
import type { Route } from "./+types/oauth-protected-resource";

// RFC 9728 protected resource metadata, /.well-known/oauth-protected-resource[/<resource path>].
export const loader = ({ request }: Route.LoaderArgs) => protectedResourceMetadataResponse(request);
export const action = ({ request }: Route.ActionArgs) => protectedResourceMetadataResponse(request);
