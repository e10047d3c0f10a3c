import { useRef } from "react";
import { useT } from "~/i18n/react";
import { PasskeyButton } from "./passkey-button";
import { signInWithPasskey } from "./passkey-client";

/**
 * The sign-in page's passkey: a button, and the browser's autofill offering passkeys on the
 * e-mail field (autocomplete="… webauthn"), started once the page runs. Passkeys need JavaScript:
 * without it (or without WebAuthn) the button is not there and a sentence says so; every other
 * form on the page works either way.
 */
export function PasskeySignIn({ csrfToken, callbackUrl }: { csrfToken: string; callbackUrl: string }) {
  const t = useT();
  // The autofill's request, until the button is pressed: pressing it ends the autofill's wait
  // even while the autofill still fetches its options (otherwise that request, begun after the
  // button's, would cancel the button's ceremony and the press would silently do nothing).
  const autofill = useRef<AbortController | null>(null);
  return (
    <PasskeyButton
      // A new token or callback URL starts the autofill's request again, with them.
      key={`${csrfToken} ${callbackUrl}`}
      id="passkey-signin"
      errorId="passkey-error"
      label={t("passkey.signin")}
      failed={t("passkey.signinFailed")}
      needsJs={t("passkey.signinNeedsJs")}
      noBrowser={t("passkey.signinNoBrowser")}
      start={() => {
        autofill.current?.abort();
        return signInWithPasskey(csrfToken, callbackUrl);
      }}
      // Conditional mediation: waits quietly until the person picks a passkey in the autofill.
      onSupported={(support) => {
        if (!support.autofill) return;
        // A new token or callback URL remounts the button: the previous request, if its options
        // are still on the way, is ended too, so it cannot start late over this one.
        autofill.current?.abort();
        autofill.current = new AbortController();
        signInWithPasskey(csrfToken, callbackUrl, { autofill: true, signal: autofill.current.signal }).catch(() => {});
      }}
    />
  );
}
