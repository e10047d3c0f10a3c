// npm run oauth:client:remove -- --client-id ID
// Removes an app and revokes everything issued to it: its grants, codes and refresh tokens.
// Audited as "oauth-client-removed" with source "cli". Exit 1 when there is no such client.
import { removeClientAs } from "../app/auth/provider/clients.server";
import { Refused, runCommand, UsageError } from "./admin-cli";

runCommand("oauth:client:remove", "npm run oauth:client:remove -- --client-id ID", { "client-id": { type: "string" } }, async (values) => {
  const clientId = values["client-id"];
  if (typeof clientId !== "string" || !clientId) throw new UsageError("--client-id is required");
  if (!(await removeClientAs({ source: "cli" }, clientId))) throw new Refused(`no client ${clientId}`);
  return `removed client ${clientId} and revoked every grant and token issued to it`;
});
