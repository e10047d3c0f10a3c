import { useEffect, useState } from "react";
import { useT } from "~/i18n/react";
import { isCancelled, passkeysSupported, reauthenticateWithPasskey } from "./passkey-client";

/**
 * The re-authentication page's passkey (ADR 080): a button once the page runs in a browser that
 * can use passkeys; without JavaScript it is not there and a sentence says so, and the page's
 * other forms work either way.
 */
export function PasskeyReauth({ csrfToken, callbackUrl, action, providerId }: { csrfToken: string; callbackUrl: string; action: string; providerId: string }) {
  const t = useT();
  const [support, setSupport] = useState<"unknown" | "yes" | "no">("unknown");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let active = true;
    passkeysSupported().then(
      ({ webauthn }) => active && setSupport(webauthn ? "yes" : "no"),
      () => active && setSupport("no"),
    );
    return () => {
      active = false;
    };
  }, []);

  if (support !== "yes") {
    return (
      <p className="muted" data-passkey-unavailable>
        {support === "no" ? t("passkey.noBrowser") : t("reauth.passkeyNeedsJs")}
      </p>
    );
  }
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      await reauthenticateWithPasskey(csrfToken, callbackUrl, action, providerId);
    } catch (e) {
      setBusy(false);
      if (!isCancelled(e)) setError(t("reauth.passkeyFailed"));
    }
  };
  return (
    <div className="stack">
      <button type="button" className="button" id="passkey-reauth" onClick={start} aria-disabled={busy || undefined}>
        {busy ? t("passkey.waiting") : t("reauth.passkey")}
      </button>
      {error ? (
        <p className="alert" role="alert" id="passkey-reauth-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
