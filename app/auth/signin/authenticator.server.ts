// remix-auth's Authenticator with every enabled provider's strategy registered under its id.
import { Authenticator } from "remix-auth";
import type { AuthConfig } from "../core/config.server";
import { getProviders } from "./registry.server";
import type { SignInResult } from "../accounts/users.server";

const cache = new WeakMap<AuthConfig, Authenticator<SignInResult>>();

export function getAuthenticator(config: AuthConfig): Authenticator<SignInResult> {
  let authenticator = cache.get(config);
  if (!authenticator) {
    authenticator = new Authenticator<SignInResult>();
    for (const provider of getProviders(config)) {
      if (provider.strategy) authenticator.use(provider.strategy, provider.id);
    }
    cache.set(config, authenticator);
  }
  return authenticator;
}
