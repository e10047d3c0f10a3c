import { useEffect, useRef, useState, type ReactNode } from "react";
import { useT } from "~/i18n/react";
import { isCancelled, passkeysSupported } from "./passkey-client";

/**
 * Why there is no passkey button: this browser has no WebAuthn (`support` "no"), or, until the page
 * runs, that passkeys need JavaScript. That sentence is `no-js`: hidden wherever scripts run, from
 * before the first paint (app/root.tsx marks <html class="js"> in the head), so it never flashes
 * while the page hydrates; once it runs, the button or the "no" sentence takes its place.
 */
export function PasskeyUnavailable({ support, noBrowser, needsJs }: { support: "unknown" | "no"; noBrowser: ReactNode; needsJs: ReactNode }) {
  if (support === "no") {
    return (
      <p className="muted" data-passkey-unavailable>
        {noBrowser}
      </p>
    );
  }
  return (
    <p className="muted no-js" data-passkey-unavailable>
      {needsJs}
    </p>
  );
}

/**
 * A passkey ceremony's button, for the sign-in and re-authentication pages: shown once the page runs
 * in a browser that can use passkeys; without JavaScript, or without WebAuthn, a sentence says why
 * it is not there (every other form of the page works either way). `start` runs the ceremony; a
 * failure other than the person cancelling shows `failed` under the button (or what `failed` says
 * of that failure). `inline` is the look of a button among a section's others (/account, /welcome).
 */
export function PasskeyButton({
  id,
  errorId,
  label,
  failed,
  needsJs,
  noBrowser,
  start,
  onSupported,
  inline = false,
}: {
  id: string;
  errorId: string;
  label: ReactNode;
  failed: string | ((error: unknown) => string);
  needsJs: ReactNode;
  noBrowser: ReactNode;
  start: () => Promise<void>;
  /** Runs once WebAuthn is known to work here (the sign-in page starts the autofill's request). */
  onSupported?: (support: { autofill: boolean }) => void;
  inline?: boolean;
}) {
  const t = useT();
  const [support, setSupport] = useState<"unknown" | "yes" | "no">("unknown");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // One ceremony per press: a double click does not start a second one.
  const running = useRef(false);
  // Back to this page from the browser's cache after the answer was sent: the button works again.
  useEffect(() => {
    const shown = (event: PageTransitionEvent) => {
      if (!event.persisted) return;
      running.current = false;
      setBusy(false);
    };
    window.addEventListener("pageshow", shown);
    return () => window.removeEventListener("pageshow", shown);
  }, []);

  useEffect(() => {
    let active = true;
    passkeysSupported().then(
      ({ webauthn, autofill }) => {
        if (!active) return;
        setSupport(webauthn ? "yes" : "no");
        if (webauthn) onSupported?.({ autofill });
      },
      () => active && setSupport("no"),
    );
    return () => {
      active = false;
    };
    // Once per mount: a caller whose values change remounts it (a `key`).
  }, []);

  if (support !== "yes") return <PasskeyUnavailable support={support} noBrowser={noBrowser} needsJs={needsJs} />;
  const run = async () => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
    try {
      await start();
    } catch (e) {
      running.current = false;
      setBusy(false);
      if (!isCancelled(e)) setError(typeof failed === "string" ? failed : failed(e));
    }
  };
  return (
    <div className={inline ? undefined : "stack"}>
      <button type="button" className={inline ? "button inline" : "button"} id={id} onClick={run} aria-disabled={busy || undefined}>
        {busy ? t("passkey.waiting") : label}
      </button>
      {error ? (
        <p className="alert" role="alert" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
