// The scopes a user can be asked for; each has a line on the consent page and on /device's
// confirmation (consent.scope.<name>). Apart from the engine so its pages can read them too.
export const PROVIDER_SCOPES = ["openid", "offline_access", "email", "profile"] as const;
export type ProviderScope = (typeof PROVIDER_SCOPES)[number];
