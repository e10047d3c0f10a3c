// What app/routes use from accounts: the audit trail and profile updates.
export { eventSource, recentEvents, recordEvent } from "./audit.server";
export { sessionUpdateResponse, updateSessionData } from "./profile.server";
export { notifyAccountDeleted, notifySecurityChange, registerPlaceLookup, type PlaceLookup, type SecurityChange } from "./security-notices.server";
export { wasntMeAction, wasntMeJsonAction, wasntMeLoader, WASNT_ME_MAX_AGE, type WasntMePage } from "./wasnt-me.server";
