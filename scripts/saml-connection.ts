// npm run saml:connection -- --org SLUG --entity-id ID --sso-url URL --cert FILE[,FILE] --domains D[,D]
//   [--idp-initiated] [--email-attribute NAME] [--name-attribute NAME] [--role member|admin]
// npm run saml:connection -- --remove CONNECTION_ID
// Adds or removes a SAML connection of an organization (docs/features/saml.md).
import fs from "node:fs";
import { db } from "../app/db/client.server";
import { addConnection, removeConnection } from "../app/auth/saml";
import { Refused, runCommand, UsageError } from "./admin-cli";

const USAGE =
  "npm run saml:connection -- --org SLUG --entity-id ID --sso-url URL --cert FILE[,FILE] --domains D[,D] [--idp-initiated] [--email-attribute NAME] [--name-attribute NAME] [--role member|admin]\n" +
  "npm run saml:connection -- --remove CONNECTION_ID";

const list = (value: string | boolean | undefined) => (typeof value === "string" ? value.split(",").map((v) => v.trim()).filter(Boolean) : []);

runCommand(
  "saml:connection",
  USAGE,
  {
    org: { type: "string" },
    "entity-id": { type: "string" },
    "sso-url": { type: "string" },
    cert: { type: "string" },
    domains: { type: "string" },
    "idp-initiated": { type: "boolean" },
    "email-attribute": { type: "string" },
    "name-attribute": { type: "string" },
    role: { type: "string" },
    remove: { type: "string" },
  },
  async (values) => {
    if (typeof values.remove === "string") {
      if (!(await removeConnection(values.remove))) throw new Refused(`no SAML connection ${values.remove}`);
      return `removed SAML connection ${values.remove}`;
    }
    if (typeof values.org !== "string") throw new UsageError("--org is required");
    const organization = await db().organization.findUnique({ where: { slug: values.org } });
    if (!organization) throw new Refused(`no organization ${values.org}`);
    let certificates: string[];
    try {
      certificates = list(values.cert).map((file) => fs.readFileSync(file, "utf8"));
    } catch {
      throw new UsageError("--cert: a file could not be read");
    }
    const mapping: { email?: string; name?: string } = {};
    if (typeof values["email-attribute"] === "string") mapping.email = values["email-attribute"];
    if (typeof values["name-attribute"] === "string") mapping.name = values["name-attribute"];
    const result = await addConnection({
      organizationId: organization.id,
      idpEntityId: typeof values["entity-id"] === "string" ? values["entity-id"] : "",
      ssoUrl: typeof values["sso-url"] === "string" ? values["sso-url"] : "",
      certificates,
      domains: list(values.domains),
      allowIdpInitiated: values["idp-initiated"] === true,
      attributeMapping: mapping,
      defaultRole: values.role === "admin" ? "admin" : values.role === undefined || values.role === "member" ? "member" : ("invalid" as "member"),
    });
    if (!result.ok) throw new Refused(result.reason);
    return `added SAML connection ${result.id}\n  metadata: <origin>/sso/${result.id}/metadata\n  ACS:      <origin>/sso/${result.id}/acs\n  sign-in:  <origin>/sso/${result.id}/signin`;
  },
);
