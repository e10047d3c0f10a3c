import type { Translate } from "~/i18n/react";

/**
 * "Signed in with a password", "Signed in with GitHub" — words a visitor knows, not provider names
 * like "Credentials". `type` is the provider's kind, `name` its name (for OAuth, "GitHub").
 */
export function describeMethod(t: Translate, type: string | null, name: string): string {
  if (type === "credentials") return t("via.credentials");
  if (type === "email") return t("via.email");
  if (type === "webauthn") return t("via.webauthn");
  return t("via.oauth", { name });
}
