import type { Translate } from "~/i18n/react";

/**
 * The kind of a sign-in through an organization's connection (SAML, OpenID Connect): its name is
 * the organization's ("" when the connection is gone), shown as "<organization> (company sign-in)".
 */
export const ORGANIZATION_METHOD_TYPE = "organization";

/** Whether a session or event names a method at all (an organization's, even nameless, does). */
export function namesMethod(method: string | null, type: string | null): method is string {
  return Boolean(method) || (method !== null && type === ORGANIZATION_METHOD_TYPE);
}

/**
 * "Signed in with a password", "Signed in with GitHub" — words a visitor knows, not provider names
 * like "Credentials". `type` is the provider's kind, `name` its name (for OAuth, "GitHub").
 */
// `type` "reset": a session begun by a password reset (sessionSignInKind in app/auth/two-factor).
export function describeMethod(t: Translate, type: string | null, name: string): string {
  if (type === "credentials") return t("via.credentials");
  if (type === "reset") return t("via.reset");
  if (type === "email") return t("via.email");
  if (type === "webauthn") return t("via.webauthn");
  if (type === ORGANIZATION_METHOD_TYPE) return name ? t("via.organization", { organization: name }) : t("via.organizationGone");
  return t("via.oauth", { name });
}

/**
 * The one label of a sign-in method for a visitor, from its kind: "password", "e-mail link or
 * code", "passkey", or the provider's own name for OAuth ("GitHub") — never an internal id such as
 * "Credentials" or "Email". `name` is the provider's name, used only for OAuth.
 */
export function methodLabel(t: Translate, type: string | null, name: string): string {
  if (type === "credentials") return t("method.credentials");
  if (type === "reset") return t("method.reset");
  if (type === "email") return t("method.email");
  if (type === "webauthn") return t("method.webauthn");
  if (type === ORGANIZATION_METHOD_TYPE) return name ? t("method.organization", { organization: name }) : t("method.organizationGone");
  return name;
}
