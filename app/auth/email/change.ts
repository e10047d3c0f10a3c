// Texts and the path of the e-mail address change, shared by the server module and the pages
// (no server-only imports, so route components may use them).
import { SIGNIN_ERROR_MESSAGES } from "../core/errors";

export const EMAIL_CHANGE_PATH = "/account/email";

export const EMAIL_CHANGE_MESSAGES = {
  invalid: "Enter one e-mail address, such as name@example.com.",
  same: "That is already your e-mail address.",
  unavailable: "E-mail cannot be sent from this server, so the address cannot be changed here.",
  notSent: SIGNIN_ERROR_MESSAGES.EmailSignin,
  expiredLink: "This link is no longer valid. It may have been used already or it may have expired.",
  taken: "That address belongs to another account.",
  expiredForm: "Your form expired. Reload the page and try again.",
} as const;
