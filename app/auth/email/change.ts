// The path of the e-mail address change, shared by the server module and the pages (no
// server-only imports, so route components may use it). Its texts are emailChange.* in the catalogue.
export const EMAIL_CHANGE_PATH = "/account/email";
