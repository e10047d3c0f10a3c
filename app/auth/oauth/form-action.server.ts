// Where our forms may be sent on to at the configured providers: the origins of their
// authorization endpoints (the sign-in and link POSTs redirect there) and, for providers with
// federated sign-out, of their end-session endpoints (the sign-out POST redirects there). The
// pages' Content-Security-Policy lists them under form-action, since browsers apply it to the
// redirects that follow a form submission (docs/decisions/037-csp-and-origin.md).
//
// Every page asks, so this never waits for the network. An endpoint the definition states is
// used as it is. A discovered one is read from the discovery cache; before the first discovery
// of a provider (or after its metadata expired) the issuer's origin stands in — every preset but
// Cognito serves its authorization endpoint there (Cognito's is on the pool's own hosted-UI
// domain, so that one page may not let its sign-in form through) — and discovery is started
// in the background, at most once per DISCOVERY_RETRY_MS per provider, so the next page has the
// real origin. A provider that cannot be reached changes nothing but its own entry.
import type { AuthConfig } from "../core/config.server";
import { log } from "../core/log.server";
import { discover, discoveredMetadata, outboundBudget } from "./http.server";
import type { OAuthProviderDefinition } from "./presets/definition";
import { oauthDefinitions } from "./presets/index.server";

const DISCOVERY_RETRY_MS = 30_000;
const lastStarted = new Map<string, number>();

function originOf(url: string | undefined): string | null {
  const parsed = url ? URL.parse(url) : null;
  return parsed && (parsed.protocol === "https:" || parsed.protocol === "http:") ? parsed.origin : null;
}

function startDiscovery(config: AuthConfig, issuer: string, expectedIssuer: string) {
  const key = `${issuer}\u0000${expectedIssuer}`;
  const now = Date.now();
  if (now - (lastStarted.get(key) ?? -Infinity) < DISCOVERY_RETRY_MS) return;
  lastStarted.set(key, now);
  discover(issuer, expectedIssuer, outboundBudget(config)).catch((error: unknown) => {
    log("warn", "oauth-discovery-failed", { error, issuer, for: "form-action" });
  });
}

function providerOrigins(config: AuthConfig, d: OAuthProviderDefinition): string[] {
  const stated = { authorization: d.endpoints?.authorization, endSession: d.endpoints?.endSession };
  let discovered: { authorization_endpoint?: string; end_session_endpoint?: string } = {};
  if (d.issuer) {
    const expectedIssuer = d.discoveryIssuer ?? d.issuer;
    const metadata = discoveredMetadata(d.issuer, expectedIssuer);
    if (metadata) discovered = metadata;
    else if (!stated.authorization || (d.federatedSignOut && !stated.endSession)) startDiscovery(config, d.issuer, expectedIssuer);
  }
  const fallback = d.issuer;
  const origins = [originOf(stated.authorization ?? discovered.authorization_endpoint ?? fallback)];
  if (d.federatedSignOut) origins.push(originOf(stated.endSession ?? discovered.end_session_endpoint ?? fallback));
  return origins.filter((o): o is string => o !== null);
}

/** The provider origins a form of ours may be redirected to, each once. */
export function oauthFormActionOrigins(config: AuthConfig): string[] {
  return [...new Set(oauthDefinitions(config).flatMap((d) => providerOrigins(config, d)))];
}
