// `npm run dev` without an OpenID provider configured: start the bundled dev IdP and configure it
// as provider `oidc`, so "Sign in with Dev IdP" works offline on a fresh clone. Its port is
// VESTIBULE_DEV_IDP_PORT's (README "Configuration"), else 5556 or any free one.
import { getConfig, resetConfig } from "../auth/core/config.server";
import { DEV_IDP_CLIENT, DEV_IDP_USER, devIdpClients, devIdpPort, startDevIdp, type RunningIdp } from "./idp.server";

// Kept on globalThis: Vite re-evaluates this module after edits, and the IdP must start once.
const HELD = Symbol.for("vestibule.dev-idp");
const holder = globalThis as typeof globalThis & { [HELD]?: Promise<RunningIdp> };

export async function idpDevStep(print: (line: string) => void) {
  if (getConfig().oidc && !holder[HELD]) return;
  // VESTIBULE_DEV_IDP_PORT: the port it listens on (default 5556, or a free one when that is busy).
  // Named providers (AUTH_OIDC_<NAME>_*) whose issuer is this IdP get a client of their own.
  const port = devIdpPort(process.env.VESTIBULE_DEV_IDP_PORT);
  holder[HELD] ??= startDevIdp({ ...port, host: "localhost", clients: devIdpClients(port.port, getConfig().oidcProviders) });
  const idp = await holder[HELD];
  process.env.AUTH_OIDC_ISSUER = idp.issuer;
  process.env.AUTH_OIDC_ID = DEV_IDP_CLIENT.clientId;
  process.env.AUTH_OIDC_SECRET = DEV_IDP_CLIENT.clientSecret;
  process.env.AUTH_OIDC_NAME ||= "Dev IdP";
  resetConfig();
  const named = getConfig().oidcProviders.filter((p) => idp.clients.some((c) => c.callbackPath === `/auth/callback/${p.id}`));
  print(`[vestibule] dev OpenID provider: ${idp.issuer} (provider "oidc"${named.map((p) => `, "${p.id}"`).join("")}); demo user: ${DEV_IDP_USER.email} / password: ${DEV_IDP_USER.password}`);
}
