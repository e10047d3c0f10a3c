import { useEffect, useState } from "react";
import { Form } from "react-router";
import { CsrfField } from "./auth-forms";
import { isCancelled, OptionsRefused, passkeysSupported, registerPasskey } from "./passkey-client";

export type PasskeyRow = { id: string; name: string; createdAt: string; lastUsedAt: string | null; deviceType: string; backedUp: boolean };

type Props = {
  csrfToken: string;
  enabled: boolean;
  maxName: number;
  passkeys: PasskeyRow[];
  offer: boolean;
  /** The sign-in is too old to add a passkey (ADR 042): a link to sign in again instead of the button. */
  signInAgain: boolean;
  signInAgainUrl: string;
  notice: string | null;
  /** The rename form's refusal: which passkey and why. */
  renameError: { passkeyId: string; message: string } | null;
};

const describeKind = (p: PasskeyRow) =>
  `${p.deviceType === "multiDevice" ? "Synced passkey" : "Device-bound passkey"}${p.backedUp ? ", backed up" : ""}`;

/**
 * The "Add a passkey" button. Passkeys need JavaScript (the browser's WebAuthn call): without it,
 * or in a browser without WebAuthn, the button is not there and a sentence says so.
 */
export function AddPasskeyButton({ csrfToken, label = "Add a passkey", callbackUrl = "/account?updated=passkey-added" }: { csrfToken: string; label?: string; callbackUrl?: string }) {
  const [support, setSupport] = useState<"unknown" | "yes" | "no">("unknown");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    passkeysSupported().then(
      (s) => setSupport(s.webauthn ? "yes" : "no"),
      () => setSupport("no"),
    );
  }, []);
  if (support !== "yes") {
    return (
      <p className="muted" data-passkey-unavailable>
        {support === "no" ? "This browser cannot use passkeys." : "Adding a passkey needs JavaScript."}
      </p>
    );
  }
  const add = async () => {
    setBusy(true);
    setError(null);
    try {
      await registerPasskey(csrfToken, callbackUrl);
    } catch (e) {
      setBusy(false);
      // A refusal the server explains (a session that has not passed the second factor, ADR 045) says why.
      if (!isCancelled(e)) setError(e instanceof OptionsRefused && e.reason ? e.reason : "The passkey could not be added. Try again.");
    }
  };
  return (
    <div>
      <button type="button" className="button inline" id="add-passkey" onClick={add} aria-disabled={busy || undefined}>
        {busy ? "Waiting for your passkey…" : label}
      </button>
      {error ? (
        <p className="alert" role="alert" id="add-passkey-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** /account: the user's passkeys (contract §13), renamed and removed by plain forms. */
export function PasskeysSection({ csrfToken, enabled, maxName, passkeys, offer, signInAgain, signInAgainUrl, notice, renameError }: Props) {
  if (!enabled && passkeys.length === 0) return null;
  return (
    <section className="card" aria-labelledby="passkeys-heading" id="passkeys">
      <h2 id="passkeys-heading">Passkeys</h2>
      {notice ? (
        <p className="notice" role="status" id="passkeys-notice">
          {notice}
        </p>
      ) : null}
      {offer ? (
        <p id="passkey-offer">
          <strong>Add a passkey for next time:</strong> sign in with your fingerprint, face or screen lock instead of a password or
          e-mail.
        </p>
      ) : null}
      {passkeys.length === 0 ? (
        <p className="muted">You have no passkeys yet.</p>
      ) : (
        <ul className="sessions" id="passkey-list">
          {passkeys.map((p) => {
            const error = renameError?.passkeyId === p.id ? renameError.message : null;
            const inputId = `passkey-name-${p.id}`;
            return (
              <li key={p.id} data-passkey-id={p.id}>
                <div>
                  <div data-passkey-name>{p.name}</div>
                  <div className="muted">
                    {describeKind(p)} · added {new Date(p.createdAt).toUTCString()} · last used{" "}
                    {p.lastUsedAt ? new Date(p.lastUsedAt).toUTCString() : "never"}
                  </div>
                </div>
                <Form method="post" className="inline-form">
                  <CsrfField token={csrfToken} />
                  <input type="hidden" name="intent" value="passkey-rename" />
                  <input type="hidden" name="passkeyId" value={p.id} />
                  <label htmlFor={inputId}>Name for {p.name}</label>
                  <input
                    id={inputId}
                    name="name"
                    type="text"
                    defaultValue={p.name}
                    maxLength={maxName}
                    required
                    aria-invalid={error ? true : undefined}
                    aria-describedby={error ? `${inputId}-error` : undefined}
                  />
                  {error ? (
                    <p className="field-error" id={`${inputId}-error`} role="alert" data-error-for="name">
                      {error}
                    </p>
                  ) : null}
                  <button type="submit" className="button secondary inline">
                    Rename
                  </button>
                </Form>
                <Form method="post" className="inline-form">
                  <CsrfField token={csrfToken} />
                  <input type="hidden" name="intent" value="passkey-remove" />
                  <input type="hidden" name="passkeyId" value={p.id} />
                  <button type="submit" className="button danger inline">
                    Remove {p.name}
                  </button>
                </Form>
              </li>
            );
          })}
        </ul>
      )}
      {enabled && signInAgain ? (
        <p id="passkey-sign-in-again">
          To add a passkey, <a href={signInAgainUrl}>sign in again</a>: adding one needs a sign-in from the last few
          minutes.
        </p>
      ) : enabled ? (
        <AddPasskeyButton csrfToken={csrfToken} label={offer ? "Add a passkey for next time" : "Add a passkey"} />
      ) : null}
    </section>
  );
}
