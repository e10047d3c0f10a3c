// The OAuth provider's surface for app/routes (docs/features/provider.md).
export { interactionAction, interactionPage, type ConsentPage, type InteractionOutcome } from "./interaction.server";
export { appsWithAccess, revokeAppAccess, type AppWithAccess } from "./apps.server";
