// What app/routes use from the second factor: /account's intents and its status.
export { confirmTotp, disableTotp, pendingTotpSetup, type EnrolmentRefusal, replaceRecoveryCodes, startTotp, turnOffSecondFactorFor, type EnrolmentOutcome, type TotpSetup } from "./enrolment.server";
export { twoFactorStatus, type TwoFactorStatus } from "./store.server";
export { sessionSignInKind } from "./policy.server";
