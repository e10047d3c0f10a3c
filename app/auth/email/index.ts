// What app/routes use from e-mail sign-in: changing a user's address. (The page texts, which the
// browser also needs, are ./change.ts.)
export { confirmEmailChange, emailChangeAvailable, emailChangePageData, requestEmailChange } from "./change.server";
