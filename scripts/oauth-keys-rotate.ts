// npm run oauth:keys:rotate
// A new signing key for the OAuth provider (docs/features/provider.md, ADR 130): one per algorithm,
// published at once and signing a minute later, when every instance has read it; the keys it
// replaces stay in the JWKS until every token they signed has expired, then cleanup removes them.
import { getConfig } from "../app/auth/core/config.server";
import { rotateSigningKeys } from "../app/auth/provider/signing-keys.server";
import { Refused, runCommand } from "./admin-cli";

runCommand("oauth:keys:rotate", "npm run oauth:keys:rotate", {}, async () => {
  if (!getConfig().provider) throw new Refused("the OAuth provider is off (AUTH_PROVIDER=true turns it on)");
  const { kids, activeFrom } = await rotateSigningKeys();
  return [`new signing keys ${kids.join(", ")}: published now, signing from ${activeFrom.toISOString()}`, "the previous keys stay published until the tokens they signed have expired"].join("\n");
});
