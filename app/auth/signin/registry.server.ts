// The provider registry, the composition root of sign-in: the only module that imports the
// method folders. It puts their providers together in display order and collects what they add
// to sign-out and to unlinking. Methods never import it (docs/decisions/030-auth-layout.md).
import type { AccountDeletedHook } from "../accounts/deletion.server";
import { getConfig, type AuthConfig } from "../core/config.server";
import { credentialsMethod } from "../credentials/strategy.server";
import { emailMethod } from "../email/strategy.server";
import { oauthMethod } from "../oauth/providers.server";
import { passkeysMethod } from "../passkeys/strategy.server";
import type { BeforeUnlinkHook, Provider, SignInMethod, SignOutHook } from "./provider";
import { SAML_METHOD, SAML_METHOD_LABEL } from "../saml/paths";
import { OIDC_CONNECTION_METHOD, OIDC_CONNECTION_METHOD_LABEL } from "../oidc-connections/paths";
import { samlConnectionsForDomain } from "../saml/connections.server";
import { oidcConnectionsForDomain } from "../oidc-connections/connections.server";
import { enterpriseConnectionsForDomain, registerConnectionKind, type EnterpriseConnection } from "../organizations/connections.server";
import { organizationRequiresMfa, organizationSessionLimits, signInVerdict } from "../organizations/policy.server";
import { registerMfaRequirement } from "../accounts/second-factor-gate.server";
import { registerSessionLimits } from "../core/session.server";
import { registerSignInRule } from "./flow.server";

const METHODS: readonly SignInMethod[] = [oauthMethod, emailMethod, credentialsMethod, passkeysMethod];

// The enterprise connection kinds (ADR 152): the address step's finders and the session methods the
// organization policy counts as its own sign-in (ADR 165). The one place a protocol is added:
registerConnectionKind({ method: SAML_METHOD, forDomain: samlConnectionsForDomain });
registerConnectionKind({ method: OIDC_CONNECTION_METHOD, forDomain: oidcConnectionsForDomain });

// The organization policy (ADR 165, 166), wired where the flow, the second-factor gate and the
// session read it: none of them imports organizations.
registerSignInRule(signInVerdict);
registerMfaRequirement(organizationRequiresMfa, () => getConfig().organizations);
registerSessionLimits(organizationSessionLimits);

/** The connections covering an address's domain, every kind registered above (organizations/connections.server.ts). */
export function connectionsForDomain(domain: string): Promise<EnterpriseConnection[]> {
  return enterpriseConnectionsForDomain(domain);
}

const cache = new WeakMap<AuthConfig, Provider[]>();

export function getProviders(config: AuthConfig): Provider[] {
  let list = cache.get(config);
  if (!list) {
    list = METHODS.flatMap((method) => method.providers(config));
    cache.set(config, list);
  }
  return list;
}

export function findProvider(config: AuthConfig, id: string): Provider | undefined {
  return getProviders(config).find((p) => p.id === id);
}

/** How a page names the method a session or event came from: the provider's name, "SAML", "OpenID Connect" (an organization's connection), or the id. */
export function methodLabel(config: AuthConfig, id: string | null): string | null {
  if (!id) return null;
  if (id === SAML_METHOD) return SAML_METHOD_LABEL;
  if (id === OIDC_CONNECTION_METHOD) return OIDC_CONNECTION_METHOD_LABEL;
  return findProvider(config, id)?.name ?? id;
}

/** Work the methods attach to sign-out (say, revoking a provider's tokens), in method order. */
export const signOutHooks: readonly SignOutHook[] = METHODS.flatMap((method) => method.signOutHooks ?? []);

/** Work the methods do once a user is deleted (deleteAccount's hooks), in method order. */
export const accountDeletedHooks: readonly AccountDeletedHook[] = METHODS.flatMap((method) => (method.afterAccountDeleted ? [method.afterAccountDeleted] : []));

/** Work the methods do before an account is removed, in method order. */
export const beforeUnlinkHooks: readonly BeforeUnlinkHook[] = METHODS.flatMap((method) => (method.beforeUnlink ? [method.beforeUnlink] : []));

/**
 * The origins of the configured providers' authorization endpoints (and, with federated sign-out,
 * end-session endpoints): where a sign-in, link or sign-out form of ours is redirected to. For the
 * pages' Content-Security-Policy form-action; cheap, never waits for a provider.
 */
export function authorizationOrigins(config: AuthConfig): string[] {
  return [...new Set(METHODS.flatMap((method) => method.formActionOrigins?.(config) ?? []))];
}

/**
 * The password pages: sign-up (AUTH_SIGNUP, credentials and e-mail delivery
 * on) and the forgotten-password page (credentials and e-mail delivery on).
 */
export function passwordPagesOffered(config: AuthConfig): { signup: boolean; forgotPassword: boolean } {
  const providers = getProviders(config);
  const credentials = providers.some((p) => p.type === "credentials");
  const email = providers.some((p) => p.type === "email");
  return { signup: config.signup && credentials && email, forgotPassword: credentials && email };
}
