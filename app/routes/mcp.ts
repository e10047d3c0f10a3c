import { mcpResponse } from "~/auth/provider/example-resources.server";
import type { Route } from "./+types/mcp";

// /mcp: the example MCP server, tool `whoami` (docs/features/mcp.md); 404 unless AUTH_PROVIDER=true.
export const loader = ({ request }: Route.LoaderArgs) => mcpResponse(request);
export const action = ({ request }: Route.ActionArgs) => mcpResponse(request);
