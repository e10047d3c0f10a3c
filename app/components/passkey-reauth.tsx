import { useT } from "~/i18n/react";
import { PasskeyButton } from "./passkey-button";
import { reauthenticateWithPasskey } from "./passkey-client";

/**
 * The re-authentication page's passkey (ADR 080): a button once the page runs in a browser that
 * can use passkeys; without JavaScript it is not there and a sentence says so, and the page's
 * other forms work either way.
 */
export function PasskeyReauth({ csrfToken, callbackUrl, action, providerId }: { csrfToken: string; callbackUrl: string; action: string; providerId: string }) {
  const t = useT();
  return (
    <PasskeyButton
      id="passkey-reauth"
      errorId="passkey-reauth-error"
      label={t("reauth.passkey")}
      failed={t("reauth.passkeyFailed")}
      needsJs={t("reauth.passkeyNeedsJs")}
      noBrowser={t("passkey.noBrowser")}
      start={() => reauthenticateWithPasskey(csrfToken, callbackUrl, action, providerId)}
    />
  );
}
