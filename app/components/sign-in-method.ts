import type { Translate } from "~/i18n/react";

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
  return name;
}
