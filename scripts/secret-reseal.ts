// npm run secret:reseal
// After an AUTH_SECRET rotation (deploy/README.md, "Rotating AUTH_SECRET"; ADR 109): re-seals
// every value sealed at rest — TOTP secrets, OAuth tokens on Account rows, the OAuth provider's
// signing keys and client secrets, organizations' OpenID Connect client secrets — with the first
// configured value, so the old one can be dropped without breaking anyone's second factor or
// provider tokens. Rows are walked in batches; each is replaced by one UPDATE conditional on the
// value it read, so it is safe while instances serve (a row they changed meanwhile is read again,
// never overwritten) and running it again finds everything current. A value no configured secret
// opens is left as it is and named by kind and row id (never the value); the command then exits 1.
// Audited as "secrets-resealed" with source "cli".
import { recordEvent } from "../app/auth/accounts/audit.server";
import { actorEventFields } from "../app/auth/accounts/actor";
import { getConfig } from "../app/auth/core/config.server";
import { resealColumn, type ResealCount } from "../app/auth/core/sealed-at-rest.server";
import { tokenColumns } from "../app/auth/oauth/tokens.server";
import { oidcConnectionSecretColumn } from "../app/auth/oidc-connections/connections.server";
import { clientSecretColumn } from "../app/auth/provider/clients.server";
import { signingKeyColumn } from "../app/auth/provider/signing-keys.server";
import { totpSecretColumn } from "../app/auth/two-factor/store.server";
import { runCommand } from "./admin-cli";

runCommand("secret:reseal", "npm run secret:reseal", {}, async (_values, io) => {
  const { secrets } = getConfig();
  const counts: ResealCount[] = [];
  for (const column of [totpSecretColumn, ...tokenColumns, signingKeyColumn, clientSecretColumn, oidcConnectionSecretColumn]) counts.push(await resealColumn(column, secrets));
  const unopenable = counts.flatMap((c) => c.unopenable.map((id) => `${c.kind} ${id}`));
  const { detail, ...fields } = actorEventFields({ source: "cli" }, "", {
    kinds: Object.fromEntries(counts.map((c) => [c.kind, { resealed: c.resealed, current: c.current, unopenable: c.unopenable.length }])),
  });
  await recordEvent("secrets-resealed", { ...fields, userId: null, detail });
  const lines = counts.map((c) => `${c.kind}: ${c.resealed} re-sealed, ${c.current} already current, ${c.unopenable.length} unopenable`);
  if (unopenable.length === 0) return [...lines, "every value at rest is sealed with the first AUTH_SECRET value"].join("\n");
  io.fail();
  return [
    ...lines,
    `${unopenable.length} value(s) no configured AUTH_SECRET value opens (left as they are; restore the secret that sealed them, then run this again):`,
    ...unopenable.map((row) => `  ${row}`),
  ].join("\n");
});
