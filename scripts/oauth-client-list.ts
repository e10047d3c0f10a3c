// npm run oauth:client:list
// Every app that may sign its users in with Vestibule: id, name, kind, where it came from and its
// redirect URIs. Never a secret.
import { listClients } from "../app/auth/provider/clients.server";
import { runCommand } from "./admin-cli";

runCommand("oauth:client:list", "npm run oauth:client:list", {}, async () => {
  const clients = await listClients();
  if (clients.length === 0) return "no clients";
  return clients
    .map((c) =>
      [
        `${c.clientId}  ${c.name}  (${c.public ? "public" : "confidential"}${c.firstParty ? ", first-party" : ""}, ${c.source}, added ${c.createdAt.toISOString()})`,
        ...c.redirectUris.map((u) => `  redirect: ${u}`),
        ...c.grantTypes.filter((g) => g !== "authorization_code" && g !== "refresh_token").map((g) => `  grant: ${g}`),
      ].join("\n"),
    )
    .join("\n");
});
