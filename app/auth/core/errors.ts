// The error catalogue (contract §7): every failure in the auth core ends as one of these codes,
// which decides the page it lands on, its status and the text a visitor reads. Shared by the
// server and the pages, so it has no server-only imports.

export const SIGNIN_ERROR_MESSAGES = {
  Signin: "Try signing in with a different account.",
  OAuthSignin: "Try signing in with a different account.",
  OAuthCallback: "Try signing in with a different account.",
  OAuthCreateAccount: "Try signing in with a different account.",
  EmailCreateAccount: "Try signing in with a different account.",
  Callback: "Try signing in with a different account.",
  OAuthAccountNotLinked: "To confirm your identity, sign in with the same account you used originally.",
  EmailSignin: "The e-mail could not be sent.",
  CredentialsSignin: "Sign in failed. Check the details you provided are correct.",
  SessionRequired: "Please sign in to access this page.",
  TwoFactorRequired: "Enter the code from your authenticator app.",
  // Not in Auth.js: the pending sign-in of the second-factor page is gone (ADR 043).
  TwoFactorExpired: "Your sign-in expired before the code was entered. Sign in again.",
  // Not in Auth.js: linking an account needs a recent sign-in (ADR 058); the visitor signs in again first.
  ReauthRequired: "To link another account, sign in again first, then link it from your account page.",
} as const;

/** A change that needs a recent sign-in, refused (ADR 058): /account shows it with the link to sign in again. */
export const REAUTH_REQUIRED_MESSAGE = "For your security, sign in again to make this change. Nothing was changed.";
/** /account's hint, in place of a form that would be refused. */
export const REAUTH_HINT = "Sign in again to change this.";

export const DEFAULT_SIGNIN_ERROR_MESSAGE = "Unable to sign in.";

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

export const ERROR_PAGES = {
  Configuration: {
    status: 500,
    heading: "Server error",
    message: "There is a problem with the server configuration.",
    detail: "Check the server logs for more information.",
  },
  AccessDenied: {
    status: 403,
    heading: "Access denied",
    message: "You do not have permission to sign in.",
    detail: null,
  },
  Verification: {
    status: 403,
    heading: "Unable to sign in",
    message: "The sign in link is no longer valid.",
    detail: "It may have been used already or it may have expired.",
  },
} as const;

export type ErrorPageCode = keyof typeof ERROR_PAGES;
export type AuthErrorCode = SigninErrorCode | ErrorPageCode;

export const DEFAULT_ERROR_PAGE = {
  status: 200,
  heading: "Error",
  message: "Something went wrong while signing in.",
  detail: null,
} as const;

/** What /account's second-factor forms say when they refuse (contract §11, §13). */
export const TWO_FACTOR_MESSAGES = {
  alreadyOn: "The second factor is already on. Turn it off first to set up another authenticator app.",
  notStarted: "Start the setup again: that setup is no longer current.",
  wrongSetupCode: "That code did not match. Check that your app shows the account you just added, and enter its current code.",
  notOn: "The second factor is not on.",
  wrongCode: "That code did not work. Enter a current code from your authenticator app or an unused recovery code.",
} as const;

/** The second-factor page's refusal of a wrong, used or malformed code (contract §13). */
export function secondFactorRefusedMessage(triesLeft: number): string {
  return `That code did not work. Check your authenticator app and try again (${triesLeft} ${triesLeft === 1 ? "try" : "tries"} left).`;
}

/** RateLimited's text; `minutes` from the limit that refused (the `minutes` query parameter). */
export function rateLimitedMessage(minutes: number): string {
  return `Too many attempts. Try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`;
}

/** The `minutes` parameter of a RateLimited redirect, when it is a sane whole number. */
export function parseRetryMinutes(value: string | null | undefined): number | null {
  return value && /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : null;
}

export function signinErrorMessage(code: string | null | undefined, params?: URLSearchParams): string | null {
  if (!code) return null;
  if (code === "RateLimited") {
    const minutes = parseRetryMinutes(params?.get("minutes"));
    return minutes === null ? "Too many attempts. Try again later." : rateLimitedMessage(minutes);
  }
  return Object.hasOwn(SIGNIN_ERROR_MESSAGES, code)
    ? SIGNIN_ERROR_MESSAGES[code as keyof typeof SIGNIN_ERROR_MESSAGES]
    : DEFAULT_SIGNIN_ERROR_MESSAGE;
}

export function errorPage(code: string | null | undefined) {
  return (code && Object.hasOwn(ERROR_PAGES, code) ? ERROR_PAGES[code as ErrorPageCode] : null) ?? DEFAULT_ERROR_PAGE;
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
  constructor(
    readonly code: AuthErrorCode,
    options?: { cause?: unknown; log?: string; retryAfterSeconds?: number },
  ) {
    super(options?.log ?? code, { cause: options?.cause });
    this.name = "AuthError";
    this.retryAfterSeconds = options?.retryAfterSeconds ?? null;
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
  secondFactorToRegister: { status: 401, error: "Sign in again with your authenticator code to add a passkey." },
  // The database did not answer (contract §12: JSON endpoints answer 503).
  unavailable: { status: 503, error: "Service unavailable." },
} as const;

/** /account's passkey forms. */
export const PASSKEY_MESSAGES = {
  nameEmpty: "Enter a name for this passkey.",
  nameTooLong: "A passkey's name must be at most 60 characters.",
  nameControl: "A passkey's name cannot contain control characters.",
  notFound: "That passkey no longer exists.",
  lastMethod: "That passkey is your only way to sign in. Set up another way before removing it.",
  renamed: "Your passkey was renamed.",
  removed: "The passkey was removed.",
  added: "Your passkey was added. Next time, sign in with it.",
} as const;

/**
 * Why a chosen password is refused (contract section 15), one text per reason, and the other
 * texts of the password and e-mail code forms. `min` is AUTH_PASSWORD_MIN_LENGTH.
 */
export const PASSWORD_MESSAGES = {
  tooShort: (min: number) => `Use at least ${min} characters.`,
  tooLong: (max: number) => `Use at most ${max} characters.`,
  tooCommon: "This password is too common and easy to guess. Choose another one, such as a few unrelated words.",
  yourAddress: "Do not use your e-mail address (or its part before the @) as your password.",
  contextWord: "Do not use the name of this site or its address in your password.",
  yourName: "Do not use your name in your password.",
  breached: "This password has appeared in a data breach, so attackers try it. Choose another one.",
  required: "Enter a password.",
  currentWrong: "That is not your current password.",
  alreadySet: "You already have a password. Use “Change your password” instead.",
  notSet: "You do not have a password.",
  lastMethod: "Your password is your only way to sign in. Add another way to sign in before removing it.",
  expiredForm: "Your form expired. Reload the page and try again.",
} as const;

/** Refused password-policy reasons, in the order they are checked. */
export type PasswordRefusal = "tooShort" | "tooLong" | "tooCommon" | "yourAddress" | "contextWord" | "yourName" | "breached";

export const EMAIL_CODE_MESSAGES = {
  required: "Enter the 6-digit code from the e-mail.",
  wrong: (triesLeft: number) => `That code is not right. ${triesLeft} ${triesLeft === 1 ? "try is" : "tries are"} left.`,
} as const;

/** The texts of the sign-up and forgotten-password pages' own refusals. */
export const ADDRESS_FORM_MESSAGES = {
  invalid: "Enter one e-mail address, such as name@example.com.",
  name: "Use at most 100 characters for the name, without control characters.",
} as const;
