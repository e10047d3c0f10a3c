import { useT } from "~/i18n/react";
import { PasskeyButton } from "./passkey-button";
import { secondStepWithPasskey } from "./passkey-client";

/**
 * The second-factor page's passkey (ADR 104): a button once the page runs in a browser that can use
 * passkeys; without JavaScript it is not there and a sentence points at the page's other ways (a
 * code when the user has TOTP or recovery codes, else signing in from a browser with JavaScript).
 */
export function PasskeySecondStep({ csrfToken, withCode }: { csrfToken: string; withCode: boolean }) {
  const t = useT();
  return (
    <div id="second-step-passkey">
      <PasskeyButton
        id="second-step-passkey-button"
        errorId="second-step-passkey-error"
        label={t("twoFactor.passkey")}
        failed={t("twoFactor.passkeyFailed")}
        needsJs={withCode ? t("twoFactor.passkeyNeedsJsCode") : t("twoFactor.passkeyNeedsJs")}
        noBrowser={withCode ? t("twoFactor.passkeyNoBrowserCode") : t("twoFactor.passkeyNoBrowser")}
        start={() => secondStepWithPasskey(csrfToken)}
      />
    </div>
  );
}
