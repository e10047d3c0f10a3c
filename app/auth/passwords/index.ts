// What app/routes use of the visitor password flows.
export { isPasswordIntent, passwordIntent, type PasswordIntentResult } from "./account.server";
export { signupAction, signupPageData, type SignupValues } from "./signup.server";
export { forgotPasswordAction, forgotPasswordPageData, resetPasswordAction, resetPasswordPageData, sendPasswordResetFor, type ForgotValues, type ResetValues } from "./reset.server";
export type { Answer, FieldErrors, FormAnswer } from "./forms.server";
export { minimumLength as passwordMinimumLength } from "../credentials/password-policy.server";
