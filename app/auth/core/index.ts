// What app/routes and the app shell use from the core (app/auth/core).
export { BadRequestError, readBody } from "./body.server";
export { toRelative, validateCallbackUrl } from "./callback-url.server";
export { getConfig } from "./config.server";
export { ensureCsrfToken, verifyCsrf } from "./csrf.server";
export { cspReportResponse } from "./csp-report.server";
export { clientLogResponse, csrfResponse, sessionResponse } from "./endpoints.server";
export { jsonRedirectMiddleware } from "./json-mode.server";
export { errorPageData, errorPageHeaders, headersWith, optionalSession, requireSession, signedOutHeaders } from "./page-session.server";
export { clientAddress, type AuthRequest } from "./request.server";
export { badRequest } from "./respond.server";
export { addSessionFactors, endSession, listSessions, reissueSession, revokeSession, revokeUserSessions, sessionCookieDigest, type CurrentSession } from "./session.server";
export { isRecentAuth, reauthRefusal, reauthRequiredResponse, reauthUrl, REAUTH_REQUIRED } from "./recent-auth.server";
