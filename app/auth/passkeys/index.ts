// What app/routes use from passkeys: the /account list and its forms' rules.
export { listPasskeys, MAX_PASSKEY_NAME, PasskeyRemove, PasskeyRename, renamePasskey, type PasskeyListItem } from "./manage.server";
