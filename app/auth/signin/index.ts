// What app/routes use from sign-in: the endpoints, the pages' data, sign-out, the e-mail link
// page, and a user's ways to sign in as the configured methods see them.
export { canUnlink } from "../accounts/methods.server";
export { emailCallbackAction, emailCallbackJsonAction, emailCallbackLoader, type ChoosePasswordPage } from "./email-link-page.server";
export { isPageRequest, providerFlow, refusalAsPage, providersResponse, webauthnOptionsFlow } from "./endpoint.server";
export { removePasskey, signInMethods, unlinkAccount } from "./methods.server";
export { errorPageFor, signinPageData, providerSigninGet, signinRootAction, signoutPageData } from "./pages.server";
export { crossOriginPostRefusal } from "./origin-check.server";
export { accountDeletedHooks, authorizationOrigins, findProvider, getProviders, methodLabel } from "./registry.server";
export { signOutAction } from "./signout.server";
export { twoFactorAction, twoFactorJsonAction, twoFactorPageData, type TwoFactorOutcome } from "./two-factor-page.server";
export { verifyRequestPageData } from "./verify-request-page.server";
export { reauthAction, reauthJsonAction, reauthPageData, type ReauthPage, type ReauthPageOutcome } from "./reauth-page.server";
