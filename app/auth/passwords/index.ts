// What app/routes use of the visitor password flows (contract section 15).
export { isPasswordIntent, passwordIntent, PASSWORD_SET_WINDOW_SECONDS, type PasswordIntentResult } from "./account.server";
