// The dev banner's list of the OAuth and OpenID providers the configuration turns on, each with the
// callback URL to register at the provider (docs/providers.md): one line per provider.
import type { AuthConfig } from "../auth/core/config.server";
import { getProviders } from "../auth/signin/registry.server";

/**
 * "  <label> (<id>) → <origin>/auth/callback/<id>" for each OAuth/OIDC provider, in display order.
 * `origin`: AUTH_URL when set, else the address the dev server listens on.
 */
export function providerCallbackLines(config: AuthConfig, origin: string): string[] {
  const base = `${(config.origin ?? origin).replace(/\/$/, "")}${config.basePath}`;
  return getProviders(config)
    .filter((p) => p.type === "oauth" || p.type === "oidc")
    .map((p) => `  ${p.name} (${p.id}) → ${base}/callback/${p.id}`);
}
