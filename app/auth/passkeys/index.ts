// What app/routes use from passkeys: the /account list and its forms' rules.
export { isRecentSignIn, PASSKEY_REGISTRATION_WINDOW_MS } from "./recent-sign-in.server";
export { listPasskeys, MAX_PASSKEY_NAME, PasskeyRemove, PasskeyRename, renamePasskey, type PasskeyListItem } from "./manage.server";
