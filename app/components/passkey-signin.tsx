import { useEffect, useState } from "react";
import { useT } from "~/i18n/react";
import { isCancelled, passkeysSupported, signInWithPasskey } from "./passkey-client";

/**
 * The sign-in page's passkey: a button, and the browser's autofill offering passkeys on the
 * e-mail field (autocomplete="… webauthn"), started once the page runs. Passkeys need JavaScript:
 * without it (or without WebAuthn) the button is not there and a sentence says so; every other
 * form on the page works either way.
 */
export function PasskeySignIn({ csrfToken, callbackUrl }: { csrfToken: string; callbackUrl: string }) {
  const t = useT();
  const [support, setSupport] = useState<"unknown" | "yes" | "no">("unknown");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let active = true;
    passkeysSupported().then(
      ({ webauthn, autofill }) => {
        if (!active) return;
        setSupport(webauthn ? "yes" : "no");
        // Conditional mediation: waits quietly until the person picks a passkey in the autofill.
        if (autofill) signInWithPasskey(csrfToken, callbackUrl, { autofill: true }).catch(() => {});
      },
      () => active && setSupport("no"),
    );
    return () => {
      active = false;
    };
  }, [csrfToken, callbackUrl]);

  if (support !== "yes") {
    return (
      <p className="muted" data-passkey-unavailable>
        {support === "no" ? t("passkey.signinNoBrowser") : t("passkey.signinNeedsJs")}
      </p>
    );
  }
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      await signInWithPasskey(csrfToken, callbackUrl);
    } catch (e) {
      setBusy(false);
      if (!isCancelled(e)) setError(t("passkey.signinFailed"));
    }
  };
  return (
    <div className="stack">
      <button type="button" className="button" id="passkey-signin" onClick={start} aria-disabled={busy || undefined}>
        {busy ? t("passkey.waiting") : t("passkey.signin")}
      </button>
      {error ? (
        <p className="alert" role="alert" id="passkey-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
