import { ACCOUNT_SECTION, accountAt, ACCOUNT_FORM_ACTION } from "./account-sections";
import { Form } from "react-router";
import { useT, type Translate } from "~/i18n/react";
import { CsrfField } from "./auth-forms";
import { LocalTime } from "./local-time";
import { PasskeyButton } from "./passkey-button";
import { OptionsRefused, registerPasskey } from "./passkey-client";

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

const describeKind = (t: Translate, p: PasskeyRow) => {
  const kind = p.deviceType === "multiDevice" ? t("passkey.synced") : t("passkey.deviceBound");
  return p.backedUp ? t("passkey.backedUp", { kind }) : kind;
};

/** The server's refusals of an added passkey (its JSON text, in English: JSON answers never change language) in the page's language. */
const REFUSALS: Record<string, "passkey.refusedSignIn" | "passkey.refusedSignInAgain" | "passkey.refusedSecondFactor"> = {
  "Sign in to add a passkey.": "passkey.refusedSignIn",
  "Sign in again to add a passkey.": "passkey.refusedSignInAgain",
  "Sign in again with your second factor to add a passkey.": "passkey.refusedSecondFactor",
};

/**
 * The "Add a passkey" button. Passkeys need JavaScript (the browser's WebAuthn call): without it,
 * or in a browser without WebAuthn, the button is not there and a sentence says so.
 */
export function AddPasskeyButton({ csrfToken, label, callbackUrl = accountAt(ACCOUNT_SECTION.passkeys, { updated: "passkey-added" }) }: { csrfToken: string; label?: string; callbackUrl?: string }) {
  const t = useT();
  // A refusal the server explains (a session that has not passed the second factor, ADR 045) says why.
  const failed = (e: unknown) => {
    const reason = e instanceof OptionsRefused && e.reason ? e.reason : null;
    return reason && Object.hasOwn(REFUSALS, reason) ? t(REFUSALS[reason]!) : (reason ?? t("passkey.addFailed"));
  };
  // One ceremony per press (PasskeyButton): a second click while one runs would make the
  // authenticator create another passkey.
  return (
    <PasskeyButton
      id="add-passkey"
      errorId="add-passkey-error"
      label={label ?? t("passkey.add")}
      failed={failed}
      needsJs={t("passkey.needsJs")}
      noBrowser={t("passkey.noBrowser")}
      start={() => registerPasskey(csrfToken, callbackUrl)}
      inline
    />
  );
}

/** /account: the user's passkeys, renamed and removed by plain forms. */
export function PasskeysSection({ csrfToken, enabled, maxName, passkeys, offer, signInAgain, signInAgainUrl, notice, renameError }: Props) {
  const t = useT();
  if (!enabled && passkeys.length === 0) return null;
  return (
    <section className="card" aria-labelledby="passkeys-heading" id={ACCOUNT_SECTION.passkeys}>
      <h2 id="passkeys-heading">{t("passkey.heading")}</h2>
      {notice ? (
        <p className="notice" role="status" id="passkeys-notice">
          {notice}
        </p>
      ) : null}
      {offer ? (
        <p id="passkey-offer">{t.rich("passkey.offer", { strong: (c) => <strong>{c}</strong> })}</p>
      ) : null}
      {passkeys.length === 0 ? (
        <p className="muted">{t("passkey.none")}</p>
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
                    {t.rich("passkey.details", {
                      kind: describeKind(t, p),
                      added: <LocalTime value={p.createdAt} />,
                      lastUsed: p.lastUsedAt ? <LocalTime value={p.lastUsedAt} /> : t("time.never"),
                    })}
                  </div>
                </div>
                <Form method="post" action={ACCOUNT_FORM_ACTION} className="inline-form">
                  <CsrfField token={csrfToken} />
                  <input type="hidden" name="intent" value="passkey-rename" />
                  <input type="hidden" name="passkeyId" value={p.id} />
                  <label htmlFor={inputId}>{t("passkey.nameFor", { name: p.name })}</label>
                  <input
                    id={inputId}
                    name="name"
                    type="text"
                    defaultValue={p.name}
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
                    {t("passkey.rename")}
                  </button>
                </Form>
                <Form method="post" action={ACCOUNT_FORM_ACTION} className="inline-form">
                  <CsrfField token={csrfToken} />
                  <input type="hidden" name="intent" value="passkey-remove" />
                  <input type="hidden" name="passkeyId" value={p.id} />
                  <button type="submit" className="button danger inline">
                    {t("passkey.remove", { name: p.name })}
                  </button>
                </Form>
              </li>
            );
          })}
        </ul>
      )}
      {enabled && signInAgain ? (
        <p id="passkey-sign-in-again">
          {t.rich("passkey.signInAgain", { link: (c) => <a href={signInAgainUrl}>{c}</a> })}
        </p>
      ) : enabled ? (
        <AddPasskeyButton csrfToken={csrfToken} label={offer ? t("passkey.addForNextTime") : t("passkey.add")} />
      ) : null}
    </section>
  );
}
