// npm run saml:connection -- --org SLUG (--metadata FILE | --metadata-url URL | --entity-id ID --sso-url URL --cert FILE[,FILE])
//   --domains D[,D] [--idp-initiated] [--email-attribute NAME] [--name-attribute NAME] [--role member|admin]
// npm run saml:connection -- --connection CONNECTION_ID --add-cert FILE[,FILE]
// npm run saml:connection -- --connection CONNECTION_ID --remove-cert SHA256_FINGERPRINT
// npm run saml:connection -- --remove CONNECTION_ID
// Adds or removes a SAML connection of an organization (docs/features/saml.md).
import fs from "node:fs";
import { db } from "../app/db/client.server";
import { addCertificates, addConnection, idpSettingsFrom, removeCertificate, removeConnection } from "../app/auth/saml";
import type { IdpMetadataFailure } from "../app/auth/saml";
import { Refused, runCommand, UsageError } from "./admin-cli";

const USAGE =
  "npm run saml:connection -- --org SLUG (--metadata FILE | --metadata-url URL | --entity-id ID --sso-url URL --cert FILE[,FILE]) --domains D[,D] [--idp-initiated] [--email-attribute NAME] [--name-attribute NAME] [--role member|admin]\n" +
  "npm run saml:connection -- --connection CONNECTION_ID --add-cert FILE[,FILE]\n" +
  "npm run saml:connection -- --connection CONNECTION_ID --remove-cert SHA256_FINGERPRINT\n" +
  "npm run saml:connection -- --remove CONNECTION_ID";

/** The sentence for each bad metadata (the page's are in the catalogue; this command speaks English). */
const METADATA_PROBLEMS: Record<IdpMetadataFailure, string> = {
  "too-large": "the metadata is larger than 256 KB",
  "not-xml": "the metadata is not well-formed XML",
  doctype: "the metadata contains a DOCTYPE or an entity declaration (refused)",
  "not-idp-metadata": "not a SAML identity provider's metadata (no EntityDescriptor with an IDPSSODescriptor)",
  "several-idps": "the metadata describes several identity providers; give the one to connect",
  "no-entity-id": "the metadata names no entity id",
  "no-redirect-sso": "the metadata has no SingleSignOnService for the HTTP-Redirect binding",
  "no-signing-certificate": "the metadata has no signing certificate",
  "bad-certificate": "a certificate in the metadata cannot be read",
  "fetch-url": "--metadata-url must be an https: URL",
  "fetch-address": "--metadata-url leads to a private or local address (not fetched)",
  "fetch-failed": "--metadata-url could not be fetched (it must answer 200 itself, without a redirect)",
  "fetch-timeout": "--metadata-url did not answer within 5 seconds",
};

const readFiles = (files: string[], option: string) => {
  try {
    return files.map((file) => fs.readFileSync(file, "utf8"));
  } catch {
    throw new UsageError(`${option}: a file could not be read`);
  }
};

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
    metadata: { type: "string" },
    "metadata-url": { type: "string" },
    connection: { type: "string" },
    "add-cert": { type: "string" },
    "remove-cert": { type: "string" },
  },
  async (values) => {
    if (typeof values.remove === "string") {
      if (!(await removeConnection(values.remove))) throw new Refused(`no SAML connection ${values.remove}`);
      return `removed SAML connection ${values.remove}`;
    }
    if (typeof values.connection === "string") {
      if (typeof values["add-cert"] === "string") {
        const result = await addCertificates(values.connection, null, readFiles(list(values["add-cert"]), "--add-cert").join("\n"));
        if (!result.ok) throw new Refused(result.reason === "not-found" ? `no SAML connection ${values.connection}` : result.reason);
        return `added the certificate(s) to SAML connection ${values.connection}`;
      }
      if (typeof values["remove-cert"] === "string") {
        const result = await removeCertificate(values.connection, null, values["remove-cert"]);
        if (!result.ok) throw new Refused(result.reason === "last-certificate" ? "the last certificate stays: add the new one first" : result.reason === "not-found" ? "no such connection or certificate" : result.reason);
        return `removed the certificate from SAML connection ${values.connection}`;
      }
      throw new UsageError("--connection needs --add-cert or --remove-cert");
    }
    if (typeof values.org !== "string") throw new UsageError("--org is required");
    const organization = await db().organization.findUnique({ where: { slug: values.org } });
    if (!organization) throw new Refused(`no organization ${values.org}`);
    const idp = await idpSettingsFrom({
      idpEntityId: typeof values["entity-id"] === "string" ? values["entity-id"] : "",
      ssoUrl: typeof values["sso-url"] === "string" ? values["sso-url"] : "",
      certificates: readFiles(list(values.cert), "--cert").join("\n"),
      metadataXml: typeof values.metadata === "string" ? readFiles([values.metadata], "--metadata")[0] : undefined,
      metadataUrl: typeof values["metadata-url"] === "string" ? values["metadata-url"] : undefined,
    });
    if (!idp.ok) throw new Refused(METADATA_PROBLEMS[idp.failure]);
    const mapping: { email?: string; name?: string } = {};
    if (typeof values["email-attribute"] === "string") mapping.email = values["email-attribute"];
    if (typeof values["name-attribute"] === "string") mapping.name = values["name-attribute"];
    const result = await addConnection({
      organizationId: organization.id,
      ...idp.settings,
      domains: list(values.domains),
      allowIdpInitiated: values["idp-initiated"] === true,
      attributeMapping: mapping,
      defaultRole: values.role === "admin" ? "admin" : values.role === undefined || values.role === "member" ? "member" : ("invalid" as "member"),
    });
    if (!result.ok) throw new Refused(result.reason);
    return `added SAML connection ${result.id}\n  metadata: <origin>/sso/${result.id}/metadata\n  ACS:      <origin>/sso/${result.id}/acs\n  sign-in:  <origin>/sso/${result.id}/signin`;
  },
);
