// npm run oauth:client:add -- --name N --redirect-uri U [...] [--public] [--first-party]
//   [--grant client_credentials|device_code] [--post-logout-redirect-uri U] [--backchannel-logout-uri U] [--sector-identifier-uri U]
// Adds an app that may sign its users in with Vestibule (docs/features/provider.md). Prints the
// client id and, for a confidential client, its secret: once, it is kept sealed and never shown
// again. Audited as "oauth-client-added" with source "cli".
import { getConfig } from "../app/auth/core/config.server";
import { addClientAs, ClientInputError, EXTRA_GRANTS, type ExtraGrant } from "../app/auth/provider/clients.server";
import { Refused, runCommand, UsageError } from "./admin-cli";

const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : typeof value === "string" ? [value] : []);

runCommand(
  "oauth:client:add",
  "npm run oauth:client:add -- --name N --redirect-uri U [--redirect-uri U …] [--public] [--first-party] [--grant client_credentials|device_code] [--post-logout-redirect-uri U] [--backchannel-logout-uri U] [--sector-identifier-uri U]",
  {
    name: { type: "string" },
    "redirect-uri": { type: "string", multiple: true },
    public: { type: "boolean" },
    "first-party": { type: "boolean" },
    grant: { type: "string", multiple: true },
    "post-logout-redirect-uri": { type: "string", multiple: true },
    "backchannel-logout-uri": { type: "string" },
    "sector-identifier-uri": { type: "string" },
  },
  async (values) => {
    if (!getConfig().provider) throw new Refused("the OAuth provider is off (AUTH_PROVIDER=true turns it on)");
    if (typeof values.name !== "string" || !values.name.trim()) throw new UsageError("--name is required");
    const grants = list(values.grant);
    for (const grant of grants) if (!(grant in EXTRA_GRANTS)) throw new UsageError(`--grant must be ${Object.keys(EXTRA_GRANTS).join(" or ")} (got ${grant})`);
    try {
      const { client, secret } = await addClientAs(
        { source: "cli" },
        {
          name: values.name,
          redirectUris: list(values["redirect-uri"]),
          public: values.public === true,
          firstParty: values["first-party"] === true,
          grants: grants as ExtraGrant[],
          postLogoutRedirectUris: list(values["post-logout-redirect-uri"]),
          backchannelLogoutUri: typeof values["backchannel-logout-uri"] === "string" ? values["backchannel-logout-uri"] : null,
          sectorIdentifierUri: typeof values["sector-identifier-uri"] === "string" ? values["sector-identifier-uri"] : null,
        },
      );
      return [
        `added ${client.public ? "public" : "confidential"} client "${client.name}"`,
        `client_id: ${client.clientId}`,
        ...(secret ? [`client_secret: ${secret}`, "the secret is shown this once: keep it now (it is stored sealed and cannot be shown again)"] : []),
      ].join("\n");
    } catch (error) {
      if (error instanceof ClientInputError) throw new Refused(error.message);
      throw error;
    }
  },
);
