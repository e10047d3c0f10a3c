// The error codes: every failure in the auth core ends as one of these codes,
// which decides the page it lands on, its status and the text a visitor reads (the catalogue key
// named here; the server writes it in the visitor's language: ./messages.server.ts). Shared by
// the server and the pages, so it has no server-only imports.
import type { MessageKey } from "../../i18n/catalogues/en";
import type { LimitName } from "./limit-table";

/** Each sign-in error code and the catalogue key of its text (app/i18n/catalogues). */
export const SIGNIN_ERROR_MESSAGES = {
  Signin: "error.Signin",
  OAuthSignin: "error.Signin",
  OAuthCallback: "error.Signin",
  OAuthCreateAccount: "error.Signin",
  EmailCreateAccount: "error.Signin",
  Callback: "error.Signin",
  OAuthAccountNotLinked: "error.OAuthAccountNotLinked",
  EmailSignin: "error.EmailSignin",
  CredentialsSignin: "error.CredentialsSignin",
  SessionRequired: "error.SessionRequired",
  TwoFactorRequired: "error.TwoFactorRequired",
  // Not in Auth.js: the pending sign-in of the second-factor page is gone (ADR 043).
  TwoFactorExpired: "error.TwoFactorExpired",
  // Not in Auth.js: linking an account needs a recent sign-in (ADR 058); the visitor signs in again first.
  ReauthRequired: "error.ReauthRequired",
  // Not in Auth.js: the visitor pressed Cancel at the provider (error=access_denied); the page
  // names the provider (`provider=<id>`, a configured one only), see signin/pages.server.ts.
  OAuthCancelled: "error.OAuthCancelled",
  // Not in Auth.js: an organization's policy (requireSso) lets this person sign in only through its
  // connection; `domain=<domain>` lets the page name the organization and offer it (ADR 165).
  SsoRequired: "error.SsoRequired",
} as const satisfies Record<string, MessageKey>;

/**
 * Notices the sign-in page shows with `?notice=`: not a refusal, but why this browser is signed
 * out and has to sign in (again).
 */
export const SIGNIN_NOTICE_MESSAGES = {
  // "Sign out everywhere" ended this session with the others.
  SignedOutEverywhere: "notice.SignedOutEverywhere",
  // The sign-in method this session came from (a linked account, a passkey) was removed.
  SignInMethodRemoved: "notice.SignInMethodRemoved",
} as const satisfies Record<string, MessageKey>;
export type SigninNoticeCode = keyof typeof SIGNIN_NOTICE_MESSAGES;

/**
 * Codes that send the visitor back to the sign-in page with `?error=`. EmailInvalid: the e-mail
 * form got something that is not one plain address (shown at the field, §7's "any other" text).
 */
export const OTHER_SIGNIN_ERROR_CODES = [
  "MissingCSRF",
  "RateLimited",
  "EmailInvalid",
  // A passkey answer that did not verify (Auth.js's name); shown with §7's "any other" text.
  "WebAuthnVerificationError",
] as const;
export type SigninErrorCode = keyof typeof SIGNIN_ERROR_MESSAGES | (typeof OTHER_SIGNIN_ERROR_CODES)[number];

/** The error page's codes: status and the catalogue keys of heading, message and detail. */
export const ERROR_PAGES = {
  Configuration: { status: 500, prefix: "errorPage.Configuration", detail: true },
  AccessDenied: { status: 403, prefix: "errorPage.AccessDenied", detail: false },
  Verification: { status: 403, prefix: "errorPage.Verification", detail: true },
  // Not in Auth.js: the database is down or too slow (docs/decisions/106); asked again later
  // (Retry-After), unlike Configuration, which needs the operator.
  ServiceUnavailable: { status: 503, prefix: "errorPage.ServiceUnavailable", detail: true },
} as const;

export type ErrorPageCode = keyof typeof ERROR_PAGES;
export type AuthErrorCode = SigninErrorCode | ErrorPageCode;

/** The `minutes` parameter of a RateLimited redirect, when it is a sane whole number. */
export function parseRetryMinutes(value: string | null | undefined): number | null {
  return value && /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : null;
}

export function isErrorPageCode(code: string): code is ErrorPageCode {
  return Object.hasOwn(ERROR_PAGES, code);
}

/**
 * A failure with a stable code. `cause` (and `log`) go to the server log only: no response
 * ever shows them.
 */
export class AuthError extends Error {
  /** RateLimited: seconds until the refusing limit's window ends (the Retry-After header). */
  readonly retryAfterSeconds: number | null;
  /** RateLimited: the limit that refused, whose kind decides the words (ADR 111). */
  readonly limit: LimitName | null;
  /**
   * A same-origin page (path and query) the visitor goes back to instead of the error's page,
   * which says there what happened: for a visitor who is signed in and stays so.
   */
  readonly landing: string | null;
  /** More query parameters of the error's page (OAuthCancelled: the provider's id). */
  readonly params: Record<string, string>;
  constructor(
    readonly code: AuthErrorCode,
    options?: { cause?: unknown; log?: string; retryAfterSeconds?: number; limit?: LimitName; landing?: string; params?: Record<string, string> },
  ) {
    super(options?.log ?? code, { cause: options?.cause });
    this.name = "AuthError";
    this.retryAfterSeconds = options?.retryAfterSeconds ?? null;
    this.limit = options?.limit ?? null;
    this.params = options?.params ?? {};
    this.landing = options?.landing?.startsWith("/") && !options.landing.startsWith("//") ? options.landing : null;
  }
}

/**
 * Thrown by a password sign-in past the consecutive-failure ceiling (ADR 083): the answer is the
 * e-mailed-code step for `address`, whose e-mail is sent only when `send` (the password was right).
 * The shared flow hands it to the step the endpoint provides (FlowContext.emailStepUp).
 */
export class EmailStepUpRequired extends Error {
  constructor(
    readonly address: string,
    readonly send: boolean,
  ) {
    super("consecutive-failure ceiling: e-mailed code required");
    this.name = "EmailStepUpRequired";
  }
}

/**
 * GET /auth/webauthn-options/<id> refusals, in Auth.js's `{ "error": … }` shape: an action other
 * than `authenticate` or `register`, no action from a signed-in browser (which must say which),
 * and registration without a session (a passkey never creates an account, ADR 040).
 */
export const WEBAUTHN_OPTIONS_ERRORS = {
  invalidAction: { status: 400, error: "Invalid action" },
  invalidRequest: { status: 400, error: "Invalid request" },
  signInToRegister: { status: 401, error: "Sign in to add a passkey." },
  // Adding a passkey needs a sign-in from the last minutes (ADR 042).
  signInAgainToRegister: { status: 403, error: "Sign in again to add a passkey." },
  // The user's second factor is on and this session did not prove it (ADR 045).
  secondFactorToRegister: { status: 401, error: "Sign in again with your second factor to add a passkey." },
  // The database did not answer (JSON endpoints answer 503).
  unavailable: { status: 503, error: "Service unavailable." },
} as const;

/** Refused password-policy reasons, in the order they are checked (texts: password.* in the catalogue). */
export type PasswordRefusal = "tooShort" | "tooLong" | "tooCommon" | "simplePattern" | "yourAddress" | "contextWord" | "yourName" | "breached";
