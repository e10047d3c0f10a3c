// npm run oidc:connection -- --org SLUG --issuer URL --client-id ID --client-secret-file FILE --domains D[,D] [--role member|admin]
// npm run oidc:connection -- --list --org SLUG
// npm run oidc:connection -- --remove CONNECTION_ID
// Adds, lists or removes an organization's OpenID Connect connection (docs/features/oidc-connections.md).
// The client secret is read from a file, never from the command line (shell history, process list);
// adding checks the issuer's discovery first, as the organization page does. Removing one removes
// its people's links to it and ends the sessions they started through it. Both are written to the
// organization's audit log with source "cli".
import fs from "node:fs";
import { db } from "../app/db/client.server";
import { addOidcConnection, listOidcConnections, oidcCallbackPath, oidcSignInPath, removeOidcConnection } from "../app/auth/oidc-connections";
import { recordOrgEvent } from "../app/auth/organizations/audit.server";
import { Refused, runCommand, UsageError } from "./admin-cli";

/** The operator at a shell: no user, no address; the event says where the change came from. */
const OPERATOR = { userId: null, email: null, ip: null };

const USAGE =
  "npm run oidc:connection -- --org SLUG --issuer URL --client-id ID --client-secret-file FILE --domains D[,D] [--role member|admin]\n" +
  "npm run oidc:connection -- --list --org SLUG\n" +
  "npm run oidc:connection -- --remove CONNECTION_ID";

const list = (value: string | boolean | undefined) => (typeof value === "string" ? value.split(",").map((v) => v.trim()).filter(Boolean) : []);
const str = (value: string | boolean | undefined) => (typeof value === "string" ? value : "");

runCommand(
  "oidc:connection",
  USAGE,
  {
    org: { type: "string" },
    issuer: { type: "string" },
    "client-id": { type: "string" },
    "client-secret-file": { type: "string" },
    domains: { type: "string" },
    role: { type: "string" },
    list: { type: "boolean" },
    remove: { type: "string" },
  },
  async (values) => {
    if (typeof values.remove === "string") {
      const removed = await removeOidcConnection(values.remove);
      if (!removed) throw new Refused(`no OpenID Connect connection ${values.remove}`);
      await recordOrgEvent(db(), removed.organizationId, OPERATOR, "oidc-connection-removed", { connectionId: values.remove, source: "cli" });
      return `removed OpenID Connect connection ${values.remove}`;
    }
    if (typeof values.org !== "string") throw new UsageError("--org is required");
    const organization = await db().organization.findUnique({ where: { slug: values.org } });
    if (!organization) throw new Refused(`no organization ${values.org}`);
    if (values.list === true) {
      const rows = await listOidcConnections(organization.id, "<origin>");
      if (rows.length === 0) return `${values.org} has no OpenID Connect connection`;
      return rows.map((r) => `${r.id}  ${r.issuer}  client ${r.clientId}  domains ${r.domains}  role ${r.defaultRole}\n  redirect URI: ${r.callbackUrl}`).join("\n");
    }
    let clientSecret: string;
    try {
      clientSecret = fs.readFileSync(str(values["client-secret-file"]), "utf8").trim();
    } catch {
      throw new UsageError("--client-secret-file: the file could not be read");
    }
    const role = values.role === undefined ? "member" : values.role;
    if (role !== "member" && role !== "admin") throw new UsageError("--role is member or admin");
    const result = await addOidcConnection({
      organizationId: organization.id,
      issuer: str(values.issuer),
      clientId: str(values["client-id"]),
      clientSecret,
      domains: list(values.domains),
      defaultRole: role,
      // The operator is trusted with their own network: an IdP on a private or internal address is
      // allowed here (never from the organization page), and its sign-ins may reach it.
      allowPrivateAddress: true,
    });
    if (!result.ok) throw new Refused(`${result.reason.field}: ${result.reason.detail}`);
    await recordOrgEvent(db(), organization.id, OPERATOR, "oidc-connection-added", { connectionId: result.id, issuer: str(values.issuer), clientId: str(values["client-id"]), source: "cli" });
    return `added OpenID Connect connection ${result.id}\n  redirect URI (register it at the IdP): <origin>${oidcCallbackPath(result.id)}\n  sign-in:  <origin>${oidcSignInPath(result.id)}`;
  },
);
