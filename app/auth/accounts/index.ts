// What app/routes use from accounts: the audit trail, profile updates, deleting and exporting an account.
export { eventSource, recentEvents, recordEvent } from "./audit.server";
export { deleteAccount, deletedBySession, type AccountDeletedHook, type DeleteAccountResult } from "./deletion.server";
export { accountExport } from "./export.server";
export { sessionUpdateResponse, updateSessionData } from "./profile.server";
export { hasSecondFactor, mfaRequiredFor, secondFactorSetupPending, secondFactorSetupRefusal, SECOND_FACTOR_SETUP_REQUIRED } from "./second-factor-gate.server";
export { passwordBelowSingleFactorFloor } from "./passwords.server";
export { notifyAccountDeleted, notifySecurityChange, registerPlaceLookup, type PlaceLookup, type SecurityChange } from "./security-notices.server";
export { wasntMeAction, wasntMeJsonAction, wasntMeLoader, WASNT_ME_MAX_AGE, type WasntMePage } from "./wasnt-me.server";
